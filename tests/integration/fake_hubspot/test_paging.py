"""Listings page by `after` (and HubDB rows by `offset`) through exactly the ground truth."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, FakeHubSpot, ServerConfig
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client, fetch_all

PATHS = {
    ContentType.SITE_PAGE: "/cms/v3/pages/site-pages",
    ContentType.LANDING_PAGE: "/cms/pages/2026-03/landing-pages",
    ContentType.BLOG_POST: "/cms/v3/blogs/posts",
    ContentType.HUBDB_TABLE: "/cms/hubdb/2026-03/tables",
}
CONFIG = ServerConfig(ten_second_limit=None, daily_limit=None)


@pytest.mark.parametrize("content_type", PATHS)
@pytest.mark.parametrize("archived", [False, True])
async def test_after_paging_serves_the_ground_truth(
    content_type: ContentType, archived: bool, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    async with client(serve(fake)) as http:
        served = await fetch_all(http, PATHS[content_type], archived=archived, limit=4)
    truth = fake.ground_truth(SMALL.portal_id, content_type, archived=archived)
    assert [obj["id"] for obj in served] == [item.hubspot_id for item in truth]
    assert truth and all(item.archived is archived for item in truth)


async def test_rows_page_by_after_and_by_offset_alike(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    truth = fake.ground_truth(SMALL.portal_id, ContentType.HUBDB_ROW, archived=False)
    served: list[str] = []
    async with client(serve(fake)) as http:
        tables = await fetch_all(http, "/cms/v3/hubdb/tables")
        for table in tables:
            rows_path = f"/cms/v3/hubdb/tables/{table['id']}/rows"
            by_after = [row["id"] for row in await fetch_all(http, rows_path, limit=6)]
            by_offset: list[str] = []
            offset = 0
            while True:
                body = (await http.get(rows_path, params={"limit": 6, "offset": offset})).json()
                assert body["type"] == "RANDOM_ACCESS" and body["total"] == table["rowCount"]
                by_offset.extend(row["id"] for row in body["results"])
                if "paging" not in body:
                    break
                offset = body["paging"]["next"]["offset"]
                assert body["paging"]["next"]["link"].endswith(f"offset={offset}")
            assert by_after == by_offset
            assert len(by_after) == table["rowCount"]
            served.extend(f"{table['id']}:{row_id}" for row_id in by_after)
    assert served == [item.hubspot_id for item in truth]


async def test_limit_one_gives_the_totals(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    async with client(serve(fake)) as http:
        for content_type, path in PATHS.items():
            body = (await http.get(path, params={"limit": 1})).json()
            live = fake.ground_truth(SMALL.portal_id, content_type, archived=False)
            assert body["total"] == len(live) and len(body["results"]) == 1
            assert body["paging"]["next"]["link"].startswith("http://127.0.0.1:")


async def test_a_cursor_survives_a_version_change(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    path = PATHS[ContentType.SITE_PAGE]
    async with client(serve(fake)) as http:
        first = (await http.get(path, params={"limit": 10})).json()
        fake.advance(SMALL.portal_id, Churn(changed=0.3, deleted=0.3, added=0.3, archived=0.0))
        rest: list[str] = []
        params = {"limit": 10, "after": first["paging"]["next"]["after"]}
        while True:
            body = (await http.get(path, params=params)).json()
            rest.extend(obj["id"] for obj in body["results"])
            if "paging" not in body:
                break
            params["after"] = body["paging"]["next"]["after"]
    last_seen = int(first["results"][-1]["id"])
    truth = fake.ground_truth(SMALL.portal_id, ContentType.SITE_PAGE, archived=False)
    assert rest == [item.hubspot_id for item in truth if int(item.hubspot_id) > last_seen]


async def test_sorts_and_filters(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    path = PATHS[ContentType.BLOG_POST]
    truth = fake.ground_truth(
        SMALL.portal_id, ContentType.BLOG_POST, archived=False, with_data=True
    )
    async with client(serve(fake)) as http:
        newest_first = await fetch_all_sorted(http, path, "-createdAt")
        by_update = await fetch_all_sorted(http, path, "updatedAt")
        by_name = await fetch_all_sorted(http, path, "-name")
        cutoff = sorted(item.updated_at for item in truth)[10]
        body = (await http.get(path, params={"updatedAfter": cutoff.isoformat()})).json()
    assert newest_first == [item.hubspot_id for item in reversed(truth)]
    assert by_update == [item.hubspot_id for item in sorted(truth, key=lambda i: i.updated_at)]
    name_of = {item.hubspot_id: item.data["name"] for item in truth if item.data}
    served_names = [name_of[object_id] for object_id in by_name]
    assert sorted(by_name) == sorted(name_of) and served_names == sorted(served_names, reverse=True)
    assert {obj["id"] for obj in body["results"]} == {
        item.hubspot_id for item in truth if item.updated_at > cutoff
    }


async def fetch_all_sorted(http: httpx.AsyncClient, path: str, sort: str) -> list[str]:
    """All ids of a listing in the given sort order, 4 per page."""
    ids: list[str] = []
    params: dict[str, str | int] = {"limit": 4, "sort": sort}
    while True:
        body = (await http.get(path, params=params)).json()
        ids.extend(obj["id"] for obj in body["results"])
        if "paging" not in body:
            return ids
        params["after"] = body["paging"]["next"]["after"]


async def test_bad_parameters_are_refused_and_limits_clamped(serve: Serve) -> None:
    fake = FakeHubSpot([replace(SMALL, blog_posts=150)], CONFIG)
    path = PATHS[ContentType.SITE_PAGE]
    async with client(serve(fake)) as http:
        by_name = (await http.get(path, params={"limit": 2, "sort": "name"})).json()
        by_name_cursor = by_name["paging"]["next"]["after"]
        statuses = [
            (await http.get(path, params={"after": "%%%"})).status_code,
            (await http.get(path, params={"after": by_name_cursor})).status_code,
            (await http.get(path, params={"limit": 0})).status_code,
            (await http.get(path, params={"archived": "maybe"})).status_code,
            (await http.get(path, params={"sort": "colour"})).status_code,
            (await http.get(path, params={"updatedAfter": "last tuesday"})).status_code,
        ]
        big = (await http.get("/cms/v3/blogs/posts", params={"limit": 5000})).json()
        picked = (await http.get(path, params={"property": "name,slug", "limit": 3})).json()
    assert statuses == [400] * 6
    assert len(big["results"]) == 100 and big["total"] == 120  # 150 posts, 30 archived
    assert all(set(obj) == {"id", "name", "slug"} for obj in picked["results"])
