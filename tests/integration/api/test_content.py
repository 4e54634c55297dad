"""Content pages: keyset pagination, type and text filters, deleted objects left out."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from smuves_sync.content_fields import ContentRecord
from smuves_sync.db import Database, Pool
from smuves_sync.db.content import content_upsert_page
from smuves_sync.models import ContentType
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory


@pytest.fixture
async def portal(factory: Factory, alice: User) -> int:
    portal_id = await factory.portal(alice.id, portal_id=81)
    run = await factory.run(portal_id, owner=alice.id)
    for number in range(1, 8):
        await factory.content_item(run, f"p{number}", name=f"Page {number}")
    await factory.content_item(run, "b1", content_type=ContentType.BLOG_POST, name="100% real_news")
    await factory.content_item(run, "b2", content_type=ContentType.BLOG_POST, name="1000 real news")
    return portal_id


async def _walk(client: httpx.AsyncClient, user: User, query: str) -> list[list[str]]:
    """hubspot ids page by page, following `next`."""
    pages, after = [], ""
    while True:
        response = await client.get(f"/v1/portals/81/content?{query}{after}", headers=user.headers)
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append([item["hubspot_id"] for item in body["items"]])
        if body["next"] is None:
            return pages
        after = f"&after={body['next']}"


async def test_pages_follow_type_then_id_without_gaps_or_repeats(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    pages = await _walk(client, alice, "limit=4")
    assert pages == [["b1", "b2", "p1", "p2"], ["p3", "p4", "p5", "p6"], ["p7"]]


async def test_an_exact_last_page_has_no_next(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    assert await _walk(client, alice, "type=blog_post&limit=2") == [["b1", "b2"]]


async def test_items_carry_their_fields_and_document(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    response = await client.get(
        "/v1/portals/81/content?type=site_page&limit=1", headers=alice.headers
    )
    [item] = response.json()["items"]
    assert item["content_type"] == "site_page" and item["name"] == "Page 1"
    assert item["data"] == {"id": "p1", "name": "Page 1"}
    assert item["archived"] is False


async def test_the_text_filter_takes_wildcards_literally(
    client: httpx.AsyncClient, portal: int, alice: User
) -> None:
    assert await _walk(client, alice, "q=0%25%20real_") == [["b1"]]  # "0% real_"
    assert await _walk(client, alice, "q=REAL") == [["b1", "b2"]]
    assert await _walk(client, alice, "q=page&type=site_page&limit=5") == [
        ["p1", "p2", "p3", "p4", "p5"],
        ["p6", "p7"],
    ]


async def test_deleted_objects_are_left_out(
    client: httpx.AsyncClient, portal: int, admin_pool: Pool, alice: User
) -> None:
    await query(admin_pool, "plant_content_deleted", portal_id=81, hubspot_id="p2")
    pages = await _walk(client, alice, "type=site_page")
    assert pages == [["p1", "p3", "p4", "p5", "p6", "p7"]]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("content?type=web_page", "type"),
        ("content?limit=0", "limit"),
        ("content?limit=201", "limit"),
        ("content?after=not-a-cursor", "after"),
        ("content?after=WyJ4IiwieSJd", "after"),  # ["x","y"]: well formed, unknown type
        ("content?q=", "q"),
        ("content?q=%00", "q"),
        ("content?with=everything", "with"),
        ("content/web_page/11", "type"),
        ("content/blog_tag/a%00b", "hubspot_id"),
        ("content/blog_tag/11?with=versions", "with"),
    ],
)
async def test_bad_parameters_are_422_naming_them(
    client: httpx.AsyncClient, portal: int, alice: User, path: str, field: str
) -> None:
    response = await client.get(f"/v1/portals/{portal}/{path}", headers=alice.headers)
    assert response.status_code == 422
    assert response.json()["message"].startswith(f"{field}: ")


async def test_content_of_an_unknown_portal_is_404(client: httpx.AsyncClient, alice: User) -> None:
    response = await client.get("/v1/portals/82/content", headers=alice.headers)
    assert response.status_code == 404


async def test_objects_come_back_as_hubspot_sent_them(
    client: httpx.AsyncClient, factory: Factory, worker_db: Database, alice: User
) -> None:
    # NULs and lone surrogates, which Postgres text cannot hold, are stored escaped.
    portal_id = await factory.portal(alice.id, portal_id=82)
    run = await factory.run(portal_id, owner=alice.id)
    raw: dict[str, Any] = {
        "id": "n1",
        "name": "Nul\x00 and \ud800",
        "body": {"k\x00": ["\udfff", 1]},
    }
    record = ContentRecord(
        content_type="site_page",
        hubspot_id="n1",
        name=raw["name"],
        slug="s\x00",
        url=None,
        state="PUBLISHED",
        language=None,
        updated_at=None,
        archived=False,
        raw=raw,
    )
    async with worker_db.for_job(await factory.lease(portal_id)) as scoped:
        await content_upsert_page(scoped, portal_id, ContentType.SITE_PAGE, run.id, [record])

    response = await client.get("/v1/portals/82/content", headers=alice.headers)

    assert response.status_code == 200, response.text
    [item] = response.json()["items"]
    assert (item["name"], item["slug"], item["data"]) == (raw["name"], "s\x00", raw)
    assert b"\\ud800" in response.content  # the only way JSON can carry a lone surrogate
