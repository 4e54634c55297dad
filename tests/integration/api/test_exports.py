"""Starting exports, following them, and downloading the file once it is written."""

from __future__ import annotations

import httpx
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.models import JobKind, JobStatus
from smuves_sync.settings import Settings
from smuves_sync.workers.runner import Runner
from tests.integration.api.conftest import User, get_ok, written_export
from tests.support import query
from tests.support.factories import Factory


async def test_an_export_is_202_then_followed(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=71)
    response = await client.post(
        "/v1/portals/71/exports",
        json={"content_type": "site_page", "format": "jsonl"},
        headers=alice.headers,
    )
    assert response.status_code == 202
    body = response.json()
    assert body["run"]["kind"] == "export" and body["run"]["content_types"] == ["site_page"]
    assert [j["content_type"] for j in body["run"]["jobs"]] == ["site_page"]
    export = body["export"]
    assert (export["format"], export["status"], export["download_url"]) == (
        "jsonl",
        "pending",
        None,
    )
    assert "path" not in export
    got = await client.get(f"/v1/exports/{export['id']}", headers=alice.headers)
    assert got.status_code == 200 and got.json() == export

    twice = await client.post(
        "/v1/portals/71/exports", json={"content_type": "site_page"}, headers=alice.headers
    )
    assert twice.status_code == 409 and twice.json()["code"] == "ALL_DUPLICATE_JOBS"
    assert twice.json()["run_ids"] == [body["run"]["id"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content_type": "web_page"}, "content_type"),
        ({}, "content_type"),
        ({"content_type": "site_page", "format": "xlsx"}, "format"),
    ],
    ids=["unknown-type", "no-type", "unknown-format"],
)
async def test_a_bad_export_body_is_422_naming_the_field(
    client: httpx.AsyncClient, factory: Factory, alice: User, body: dict[str, str], field: str
) -> None:
    await factory.portal(alice.id, portal_id=72)
    response = await client.post("/v1/portals/72/exports", json=body, headers=alice.headers)
    assert response.status_code == 422
    assert response.json()["message"].startswith(f"{field}: ")


async def test_an_export_of_an_unknown_portal_is_404(
    client: httpx.AsyncClient, alice: User
) -> None:
    response = await client.post(
        "/v1/portals/73/exports", json={"content_type": "site_page"}, headers=alice.headers
    )
    assert response.status_code == 404


async def test_a_written_export_downloads_as_its_file(
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    api_settings: Settings,
    alice: User,
) -> None:
    content = b"hubspot_id,name\r\n1,Home\r\n2,About\r\n" * 5000  # several chunks
    export_id, _ = await written_export(
        factory, admin_pool, alice, api_settings.export_dir, content
    )
    state = await client.get(f"/v1/exports/{export_id}", headers=alice.headers)
    assert state.json()["download_url"] == f"/v1/exports/{export_id}/download"
    assert (state.json()["row_count"], state.json()["bytes"]) == (2, len(content))

    response = await client.get(f"/v1/exports/{export_id}/download", headers=alice.headers)
    assert response.status_code == 200
    assert response.content == content
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    assert f"-{export_id}.csv" in response.headers["content-disposition"]


async def test_an_unfinished_export_cannot_be_downloaded(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, kind=JobKind.EXPORT)
    export_id = await factory.export(run, status=JobStatus.RUNNING)
    response = await client.get(f"/v1/exports/{export_id}/download", headers=alice.headers)
    assert response.status_code == 409
    assert response.json()["code"] == "EXPORT_NOT_READY"


async def test_a_gone_file_is_not_served(
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    api_settings: Settings,
    alice: User,
) -> None:
    gone, path = await written_export(factory, admin_pool, alice, api_settings.export_dir, b"y")
    path.unlink()
    response = await client.get(f"/v1/exports/{gone}/download", headers=alice.headers)
    assert response.status_code == 410
    assert response.json()["code"] == "EXPORT_FILE_GONE"


@pytest.mark.parametrize("suffix", ["", "/download"])
async def test_an_unknown_export_is_404(
    client: httpx.AsyncClient, alice: User, suffix: str
) -> None:
    response = await client.get(f"/v1/exports/5555{suffix}", headers=alice.headers)
    assert response.status_code == 404
    assert response.json() == {"code": "NOT_FOUND", "message": "export 5555 not found"}


async def test_an_export_keeps_the_deleted_objects_only_when_asked(
    client: httpx.AsyncClient,
    factory: Factory,
    db: Database,
    worker_db: Database,
    api_settings: Settings,
    alice: User,
) -> None:
    portal = await factory.portal(alice.id, portal_id=74)
    await factory.content_rows(await factory.run(portal), 20)
    gone = ["00000002", "00000005", "00000010"]
    await query(
        db, "versions_mark_deleted", portal_id=portal, content_type="site_page", hubspot_ids=gone
    )

    for asked, body in [(False, {}), (True, {"include_deleted": True})]:
        response = await client.post(
            "/v1/portals/74/exports",
            json={"content_type": "site_page", **body},
            headers=alice.headers,
        )
        assert response.status_code == 202
        started = response.json()["export"]
        assert (started["include_deleted"], started["deleted_count"]) == (asked, None)
        runner = Runner(worker_db, api_settings, kinds=[JobKind.EXPORT], concurrency=1, burst=True)
        assert (await runner.run()).completed == 1
        export = await get_ok(client, alice, f"/v1/exports/{started['id']}")
        assert (export["status"], export["include_deleted"]) == ("completed", asked)
        assert (export["row_count"], export["deleted_count"]) == (20 if asked else 17, 3)
        download = await client.get(export["download_url"], headers=alice.headers)
        ids = [line.split(",")[0] for line in download.text.splitlines()[1:]]
        assert len(ids) == export["row_count"]
        assert (set(gone) <= set(ids)) if asked else set(gone).isdisjoint(ids)
