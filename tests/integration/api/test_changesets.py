"""Changesets through the app with real Postgres: import (CSV, JSON Lines, JSON), read, roll
back; who may do which; a file refused whole; the edit export started through the API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from smuves_sync.api import create_app
from smuves_sync.db import Database, Pool
from smuves_sync.settings import Settings
from tests.integration.api.conftest import User, make_token
from tests.integration.test_content_store import record
from tests.integration.test_content_versions import TYPE, fetch
from tests.support import query
from tests.support.factories import Factory

PORTAL = 8801
CSV = {"content-type": "text/csv"}


@pytest.fixture
async def posts(factory: Factory, worker_db: Database, alice: User, bob: User) -> int:
    """Alice's portal with posts 1 and 2 (post 1 at version 2, slug post-1); Bob views it."""
    await factory.portal(alice.id, portal_id=PORTAL)
    await factory.member(PORTAL, bob.id, "viewer")
    await fetch(factory, worker_db, PORTAL, [record("1"), record("2")])
    await fetch(factory, worker_db, PORTAL, [record("1", htmlTitle="Old"), record("2")])
    return PORTAL


async def _post_csv(
    client: httpx.AsyncClient, user: User, body: bytes, **params: str
) -> httpx.Response:
    return await client.post(
        f"/v1/portals/{PORTAL}/changesets",
        content=body,
        params={"content_type": "blog_post", **params},
        headers={**user.headers, **CSV},
    )


async def test_an_editor_imports_a_csv_and_members_read_it(
    client: httpx.AsyncClient, posts: int, alice: User, bob: User, factory: Factory
) -> None:
    body = b"hubspot_id,_version,htmlTitle,slug\n1,2,New,post-2\n2,1,,post-2\n"

    response = await _post_csv(client, alice, body, filename="edits.csv")

    assert response.status_code == 201, response.text
    created = response.json()
    assert created["counts"] == {"changed": 1, "unchanged": 1, "invalid": 0}
    assert (created["source"], created["status"], created["filename"]) == (
        "import",
        "draft",
        "edits.csv",
    )
    assert created["requests"] == {"blog_post": 3}
    [item] = [i for i in created["items"] if i["state"] == "pending"]
    assert item["fields"] == {"htmlTitle": "New", "slug": "post-2"}
    assert item["before"] == {"htmlTitle": "Old", "slug": "post-1"}
    assert item["warnings"] == ["slug 'post-2' is taken by blog_post 2"]
    read = await client.get(f"/v1/changesets/{created['id']}", headers=bob.headers)
    assert read.status_code == 200 and read.json() == created
    stranger = await factory.user()
    other = {"Authorization": f"Bearer {make_token(stranger)}"}
    assert (await client.get(f"/v1/changesets/{created['id']}", headers=other)).status_code == 404


async def test_items_page_by_cursor(client: httpx.AsyncClient, posts: int, alice: User) -> None:
    created = (
        await _post_csv(client, alice, b"hubspot_id,htmlTitle\n1,A\n2,B\n", limit="1")
    ).json()
    assert [i["hubspot_id"] for i in created["items"]] == ["1"] and created["next"]

    rest = await client.get(
        f"/v1/changesets/{created['id']}", params={"after": created["next"]}, headers=alice.headers
    )

    assert [i["hubspot_id"] for i in rest.json()["items"]] == ["2"] and rest.json()["next"] is None


async def test_a_viewer_may_not_import(
    client: httpx.AsyncClient, posts: int, bob: User, db: Database
) -> None:
    response = await _post_csv(client, bob, b"hubspot_id,htmlTitle\n1,Mine\n")

    assert response.status_code == 403 and response.json()["code"] == "FORBIDDEN"
    assert await query(db, "changesets_all") == []


async def test_json_and_json_lines_are_read_as_values(
    client: httpx.AsyncClient, posts: int, alice: User
) -> None:
    document = {
        "content_type": "blog_post",
        "changes": [
            {"hubspot_id": "1", "base_version": 2, "fields": {"htmlTitle": "Old", "tagIds": [3]}},
            {"hubspot_id": "2", "fields": {"useFeaturedImage": "yes"}},
        ],
    }
    as_json = await client.post(
        f"/v1/portals/{PORTAL}/changesets", json=document, headers=alice.headers
    )
    lines = b'{"hubspot_id": "2", "fields": {"name": "Renamed"}}\n'
    as_lines = await client.post(
        f"/v1/portals/{PORTAL}/changesets",
        content=lines,
        params={"content_type": "blog_post"},
        headers={**alice.headers, "content-type": "application/jsonl"},
    )

    assert as_json.status_code == 201, as_json.text
    assert as_json.json()["counts"] == {"changed": 1, "unchanged": 0, "invalid": 1}
    items = {i["hubspot_id"]: i for i in as_json.json()["items"]}
    assert items["1"]["fields"] == {"tagIds": [3]}
    assert "useFeaturedImage: expected true or false" in items["2"]["reason"]
    assert as_lines.status_code == 201
    assert as_lines.json()["items"][0]["fields"] == {"name": "Renamed"}


@pytest.mark.parametrize(
    ("body", "headers", "said"),
    [
        (b"hubspot_id,body\n1,x\n", CSV, "unknown column 'body'"),
        (b"htmlTitle\nx\n", CSV, "no 'hubspot_id' column"),
        (b"hubspot_id,htmlTitle\n1,\xff\n", CSV, "not UTF-8"),
        (b"{", {"content-type": "application/json"}, "not JSON"),
        (b"x", {"content-type": "text/plain"}, "not 'text/plain'"),
    ],
)
async def test_a_file_that_cannot_be_read_is_422_and_nothing_is_stored(
    client: httpx.AsyncClient,
    posts: int,
    alice: User,
    db: Database,
    body: bytes,
    headers: dict[str, str],
    said: str,
) -> None:
    response = await client.post(
        f"/v1/portals/{PORTAL}/changesets",
        content=body,
        params={"content_type": "blog_post"},
        headers={**alice.headers, **headers},
    )

    assert response.status_code == 422
    assert said in response.json()["message"]
    assert await query(db, "changesets_all") == []


async def test_a_file_over_the_cap_is_422_though_larger_than_the_apis_own_cap_is_not(
    api_settings: Settings, api_pool: Pool, posts: int, alice: User, db: Database
) -> None:
    settings = api_settings.model_copy(
        update={"max_request_bytes": 100, "changeset_max_bytes": 400}
    )
    app: FastAPI = create_app(settings, pool=api_pool)
    small = b"hubspot_id,htmlTitle\n1," + b"x" * 200 + b"\n"
    large = b"hubspot_id,htmlTitle\n1," + b"x" * 500 + b"\n"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        accepted = await _post_csv(client, alice, small)
        refused = await _post_csv(client, alice, large)
        other = await client.post(
            "/v1/portals", content=b"{" + b" " * 200 + b"}", headers=alice.headers
        )

    assert accepted.status_code == 201
    assert refused.status_code == 422 and refused.json()["code"] == "CHANGESET_TOO_LARGE"
    assert other.status_code == 413
    assert len(await query(db, "changesets_all")) == 1


async def test_a_rollback_puts_back_the_values_before_the_push(
    client: httpx.AsyncClient, posts: int, alice: User, bob: User, factory: Factory
) -> None:
    """Post 1's push set htmlTitle Old (version 2); post 2's failed. The rollback changes post
    1 back, based on version 2."""
    pushed = await factory.changeset(
        PORTAL,
        *_items(
            {"hubspot_id": "1", "state": "applied", "applied_version": 2,
             "fields": {"htmlTitle": "Old"}, "before": {"htmlTitle": None}},
            {"hubspot_id": "2", "state": "failed", "applied_version": None,
             "fields": {"htmlTitle": "X"}, "before": {"htmlTitle": None}},
        ),
        content_type=TYPE,
    )  # fmt: skip

    viewer = await client.post(f"/v1/changesets/{pushed}/rollback", headers=bob.headers)
    response = await client.post(f"/v1/changesets/{pushed}/rollback", headers=alice.headers)

    assert viewer.status_code == 403
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["source"], body["rolls_back"]) == ("rollback", pushed)
    assert body["counts"] == {"changed": 1, "unchanged": 0, "invalid": 0}
    [item] = body["items"]
    assert (item["hubspot_id"], item["base_version"], item["state"]) == ("1", 2, "pending")
    assert (item["fields"], item["before"]) == ({"htmlTitle": None}, {"htmlTitle": "Old"})
    nothing = await factory.changeset(PORTAL, content_type=TYPE)
    empty = await client.post(f"/v1/changesets/{nothing}/rollback", headers=alice.headers)
    assert empty.status_code == 422 and "no applied items" in empty.json()["message"]


async def test_an_edit_export_is_started_through_the_api(
    client: httpx.AsyncClient, posts: int, alice: User
) -> None:
    url = f"/v1/portals/{PORTAL}/exports"
    started = await client.post(
        url,
        json={"content_type": "blog_post", "edit": True, "fields": ["htmlTitle", "slug"]},
        headers=alice.headers,
    )
    jsonl = await client.post(
        url,
        json={"content_type": "blog_tag", "format": "jsonl", "edit": True},
        headers=alice.headers,
    )
    table = await client.post(
        url, json={"content_type": "hubdb_table", "edit": True}, headers=alice.headers
    )
    field = await client.post(
        url,
        json={"content_type": "blog_tag", "edit": True, "fields": ["body"]},
        headers=alice.headers,
    )

    assert started.status_code == 202, started.text
    assert (started.json()["export"]["edit"], started.json()["export"]["fields"]) == (
        True,
        ["htmlTitle", "slug"],
    )
    assert [r.status_code for r in (jsonl, table, field)] == [422, 422, 422]
    assert "cannot be edited" in table.json()["message"]
    assert "no editable field 'body'" in field.json()["message"]


def _items(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return list(items)
