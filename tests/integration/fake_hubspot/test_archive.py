"""Deletion as HubSpot's CMS makes it: archiving through the control API (`archive`,
`unarchive`), `archivedAt`/`deletedAt` set while `updated` stays, the archive filters."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeHubSpot, FakeHubSpotRemote, ServerConfig
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client, fetch_all
from tests.integration.fake_hubspot.openapi import validate

PORTAL = replace(SMALL, site_pages=120, blog_posts=60, blog_authors=20, blog_tags=20)
CONFIG = ServerConfig(ten_second_limit=None, daily_limit=None)
PAGES = ("Pages_rollout59888_v3_pages.json", "/cms/v3/pages/site-pages")
POSTS = ("Posts_rollout635_v3_posts.json", "/cms/v3/blogs/posts")
EPOCH = "1970-01-01T00:00:00Z"


def _live_ids(fake: FakeHubSpot, content_type: ContentType, count: int) -> list[str]:
    live = fake.ground_truth(PORTAL.portal_id, content_type, archived=False)
    return [item.hubspot_id for item in live[3 : 3 + count]]


async def test_an_archived_page_leaves_the_live_listing_with_updated_unchanged(
    serve: Serve,
) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    spec, path = PAGES
    async with client(serve(fake)) as http:
        before = {o["id"]: o for o in await fetch_all(http, path)}
        (target,) = _live_ids(fake, ContentType.SITE_PAGE, 1)
        assert fake.archive(PORTAL.portal_id, "site_page", [target, target, "999"]) == [target]
        live = await fetch_all(http, path)
        archived = {o["id"]: o for o in await fetch_all(http, path, archived=True)}
        one = await http.get(f"{path}/{target}")
        one_archived = await http.get(f"{path}/{target}", params={"archived": "true"})
        batch = await http.post(f"{path}/batch/read", json={"inputs": [target]})
        batch_archived = await http.post(
            f"{path}/batch/read", params={"archived": "true"}, json={"inputs": [target]}
        )
    assert target not in {o["id"] for o in live} and len(live) == len(before) - 1
    served = archived[target]
    assert served["updated"] == before[target]["updated"]
    assert served["archivedAt"] != EPOCH and str(served["archivedAt"]) > str(served["updated"])
    assert one.status_code == 404 and one_archived.json()["id"] == target
    assert batch.status_code == 207 and batch.json()["results"] == []
    assert batch_archived.status_code == 200 and batch_archived.json()["results"][0] == served
    validate(spec, path, 200, {"results": list(archived.values()), "total": len(archived)})
    validate(spec, path + "/{objectId}", 200, one_archived.json())


async def test_the_archive_filters_find_what_was_archived_since(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    spec, path = POSTS
    targets = _live_ids(fake, ContentType.BLOG_POST, 3)
    async with client(serve(fake)) as http:
        old = await fetch_all(http, path, archived=True)
        newest_old = max(int(str(o["archivedAt"])) for o in old)
        fake.archive(PORTAL.portal_id, ContentType.BLOG_POST, targets)
        since = {"archived": "true", "archivedAt__gt": str(newest_old)}
        found = (await http.get(path, params=since)).json()
        before = {"archived": "true", "archivedAt__lte": str(newest_old)}
        rest = (await http.get(path, params=before)).json()
        live = (await http.get(path, params={"archivedAt__gt": str(newest_old)})).json()
        # Authors carry `deletedAt`, which their filter names.
        (author,) = _live_ids(fake, ContentType.BLOG_AUTHOR, 1)
        fake.archive(PORTAL.portal_id, ContentType.BLOG_AUTHOR, [author])
        authors = (
            await http.get(
                "/cms/v3/blogs/authors",
                params={"archived": "true", "deletedAt__gt": "2025-06-01T00:00:00Z"},
            )
        ).json()
    assert sorted(o["id"] for o in found["results"]) == sorted(targets)
    assert found["total"] == 3 and rest["total"] == len(old) and live["total"] == 0
    assert [o["id"] for o in authors["results"]] == [author]
    validate(spec, path, 200, found)


async def test_unarchive_brings_it_back_with_updated_unchanged(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    spec, path = PAGES
    pid = PORTAL.portal_id
    archived = fake.ground_truth(pid, ContentType.SITE_PAGE, archived=True)
    target = archived[0].hubspot_id
    async with client(serve(fake)) as http:
        remote = FakeHubSpotRemote(str(http.base_url))
        assert remote.unarchive(pid, "site_page", [target]) == [target]
        assert remote.unarchive(pid, "site_page", [target]) == []
        live = {o["id"]: o for o in await fetch_all(http, path)}
        gone = await http.get(f"{path}/{target}", params={"archived": "true"})
        assert remote.archive(pid, "site_page", [target]) == [target]
        again = await http.get(f"{path}/{target}", params={"archived": "true"})
    back = live[target]
    assert back["archivedAt"] == EPOCH and gone.status_code == 404
    truth = {i.hubspot_id: i for i in fake.ground_truth(pid, ContentType.SITE_PAGE)}
    assert truth[target].updated_at == archived[0].updated_at and truth[target].archived
    assert again.json()["updated"] == back["updated"]
    validate(spec, path + "/{objectId}", 200, back)


async def test_the_admin_endpoints_refuse_what_cannot_be_archived(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    url = f"/_fake/portals/{PORTAL.portal_id}/archive"
    async with httpx.AsyncClient(base_url=serve(fake)) as http:
        rows = await http.post(url, json={"type": "hubdb_row", "ids": ["1"]})
        not_ids = await http.post(url, json={"type": "site_page", "ids": [1]})
        unknown = await http.post("/_fake/portals/1/archive", json={"type": "site_page"})
    assert (rows.status_code, not_ids.status_code, unknown.status_code) == (400, 400, 404)


@pytest.mark.parametrize("content_type", [ContentType.HUBDB_TABLE, ContentType.URL_REDIRECT])
def test_archiving_the_other_types_moves_updated(content_type: ContentType) -> None:
    spec = replace(PORTAL, url_redirects=20)
    fake = FakeHubSpot([spec], CONFIG)
    live = fake.ground_truth(spec.portal_id, content_type, archived=False)
    target = live[0].hubspot_id
    assert fake.archive(spec.portal_id, content_type, [target]) == [target]
    after = {i.hubspot_id: i for i in fake.ground_truth(spec.portal_id, content_type)}
    assert after[target].archived and after[target].updated_at > live[0].updated_at
