"""Content changes between two syncs: `advance` changes, deletes, archives and adds objects."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import timedelta

import httpx

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, FakeHubSpot, ServerConfig, TruthItem
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client, fetch_all

PORTAL = replace(SMALL, site_pages=400, archived_share=0.05)
CONFIG = ServerConfig(ten_second_limit=None, daily_limit=None)


def _by_id(items: list[TruthItem]) -> dict[str, TruthItem]:
    return {item.hubspot_id: item for item in items}


def test_a_step_changes_deletes_archives_and_adds_exact_shares() -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    pid, site = PORTAL.portal_id, ContentType.SITE_PAGE
    before = _by_id(fake.ground_truth(pid, site, with_data=True))
    live_before = [item for item in before.values() if not item.archived]
    assert len(before) == 400 and len(live_before) == 380

    churn = Churn(changed=0.1, deleted=0.05, added=0.025, archived=0.02)
    assert fake.advance(pid, churn) == 1
    after = _by_id(fake.ground_truth(pid, site, with_data=True))

    gone = before.keys() - after.keys()
    new = after.keys() - before.keys()
    kept = before.keys() & after.keys()
    archived_now = {i for i in kept if after[i].archived and not before[i].archived}
    changed = {i for i in kept - archived_now if after[i].updated_at != before[i].updated_at}
    assert (len(gone), len(new), len(changed), len(archived_now)) == (19, 10, 38, 8)
    assert not gone & {item.hubspot_id for item in before.values() if item.archived}
    for object_id in changed:
        assert after[object_id].updated_at > before[object_id].updated_at
        assert after[object_id].data != before[object_id].data
    for object_id in kept - changed - archived_now:
        assert after[object_id].data == before[object_id].data
    # Archiving a page leaves `updated` alone, as HubSpot's CMS does.
    for object_id in archived_now:
        assert after[object_id].updated_at == before[object_id].updated_at
    newest_before = max(int(i) for i in before)
    assert all(int(i) > newest_before for i in new)
    assert fake.version(pid) == 1


def test_tables_follow_their_rows() -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    pid = PORTAL.portal_id
    tables_before = _by_id(fake.ground_truth(pid, ContentType.HUBDB_TABLE, with_data=True))
    fake.advance(pid, Churn(changed=0.2, deleted=0.1, added=0.1, archived=0.0))
    tables_after = _by_id(fake.ground_truth(pid, ContentType.HUBDB_TABLE, with_data=True))
    rows = fake.ground_truth(pid, ContentType.HUBDB_ROW, archived=False)
    for table_id, table in tables_after.items():
        assert table.data is not None
        if table.archived:
            continue
        live_rows = [r for r in rows if r.hubspot_id.startswith(f"{table_id}:")]
        assert table.data["rowCount"] == len(live_rows)
        assert table.updated_at > tables_before[table_id].updated_at


async def test_the_server_serves_the_new_version(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    async with client(serve(fake)) as http:
        first = await fetch_all(http, "/cms/v3/pages/site-pages")
        response = await http.post(f"/_fake/portals/{PORTAL.portal_id}/advance", json={})
        assert response.json() == {"version": 1}
        second = await fetch_all(http, "/cms/v3/pages/site-pages")
    truth = fake.ground_truth(PORTAL.portal_id, ContentType.SITE_PAGE, archived=False)
    assert [obj["id"] for obj in second] == [item.hubspot_id for item in truth]
    assert {o["id"]: o["updated"] for o in first} != {o["id"]: o["updated"] for o in second}


async def test_admin_rejects_bad_churn(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], CONFIG)
    async with httpx.AsyncClient(base_url=serve(fake)) as http:
        bad = await http.post(f"/_fake/portals/{PORTAL.portal_id}/advance", json={"changed": 2})
        unknown = await http.post("/_fake/portals/999/advance", json={})
    assert (bad.status_code, unknown.status_code) == (400, 404)
    assert fake.version(PORTAL.portal_id) == 0


def test_versions_replay_identically() -> None:
    churns = [Churn(), Churn(changed=0.3, deleted=0.0, added=0.1, archived=0.1), Churn()]
    # On the synthetic timeline: by the machine's clock the two fakes' steps, made moments
    # apart, are dated a millisecond or more apart.
    synthetic = replace(CONFIG, real_clock=False)
    eager, lazy = FakeHubSpot([PORTAL], synthetic), FakeHubSpot([PORTAL], synthetic)
    for churn in churns:
        eager.ground_truth(PORTAL.portal_id, ContentType.BLOG_POST)  # built before each step
        eager.advance(PORTAL.portal_id, churn)
        lazy.advance(PORTAL.portal_id, churn)  # built once, after all steps
    for content_type in ContentType:
        assert eager.ground_truth(
            PORTAL.portal_id, content_type, with_data=True
        ) == lazy.ground_truth(PORTAL.portal_id, content_type, with_data=True)


def test_rounding_never_picks_more_objects_than_exist() -> None:
    tiny = replace(PORTAL, site_pages=3, archived_share=0.0)
    fake = FakeHubSpot([tiny], CONFIG)
    fake.advance(tiny.portal_id, Churn(changed=0.5, deleted=0.5, added=0.0, archived=0.0))
    assert len(fake.ground_truth(tiny.portal_id, ContentType.SITE_PAGE)) == 2


BLOG_TYPES = (
    ContentType.BLOG_POST,
    ContentType.BLOG_AUTHOR,
    ContentType.BLOG_TAG,
    ContentType.URL_REDIRECT,
)


def test_a_step_changes_only_its_types_and_brings_archived_objects_back() -> None:
    spec = replace(PORTAL, blog_posts=200, blog_authors=80, blog_tags=80, url_redirects=80, blogs=8)
    fake = FakeHubSpot([spec], CONFIG)
    pid = spec.portal_id
    kinds = [t for t in ContentType if t is not ContentType.HUBDB_ROW]
    before = {t: _by_id(fake.ground_truth(pid, t, with_data=True)) for t in kinds}

    churn = Churn(
        changed=0.1, deleted=0.05, added=0.05, archived=0.05, unarchived=0.5, types=BLOG_TYPES
    )
    fake.advance(pid, churn)

    for content_type in kinds:
        old = before[content_type]
        new = _by_id(fake.ground_truth(pid, content_type, with_data=True))
        if content_type not in BLOG_TYPES:
            assert new == old, content_type
            continue
        kept = old.keys() & new.keys()
        back = {i for i in kept if old[i].archived and not new[i].archived}
        were_archived = sum(item.archived for item in old.values())
        assert len(back) == round(were_archived * 0.5) > 0, content_type
        for object_id in back:
            assert new[object_id].updated_at > old[object_id].updated_at
            assert new[object_id].data != old[object_id].data
        assert new.keys() - old.keys() and old.keys() - new.keys(), content_type


async def test_the_admin_endpoint_takes_the_types_and_unarchived_share(serve: Serve) -> None:
    spec = replace(PORTAL, blog_tags=40, archived_share=0.25)
    fake = FakeHubSpot([spec], CONFIG)
    tags_before = _by_id(fake.ground_truth(spec.portal_id, ContentType.BLOG_TAG))
    pages_before = fake.ground_truth(spec.portal_id, ContentType.SITE_PAGE, with_data=True)
    body = {"changed": 0, "deleted": 0, "added": 0, "archived": 0, "unarchived": 1.0}
    async with httpx.AsyncClient(base_url=serve(fake)) as http:
        response = await http.post(
            f"/_fake/portals/{spec.portal_id}/advance", json={**body, "types": ["blog_tag"]}
        )
        bad = await http.post(
            f"/_fake/portals/{spec.portal_id}/advance", json={"types": ["web_page"]}
        )
    assert (response.json(), bad.status_code) == ({"version": 1}, 400)
    tags = fake.ground_truth(spec.portal_id, ContentType.BLOG_TAG)
    assert not any(tag.archived for tag in tags)
    assert {tag.hubspot_id for tag in tags} == set(tags_before)
    assert fake.ground_truth(spec.portal_id, ContentType.SITE_PAGE, with_data=True) == pages_before


async def test_a_step_is_dated_by_the_fakes_clock_and_listings_filter_and_sort_by_it(
    serve: Serve,
) -> None:
    skewed = FakeHubSpot([PORTAL], replace(CONFIG, clock_skew_seconds=-300))
    pid, site = PORTAL.portal_id, ContentType.SITE_PAGE
    before = _by_id(skewed.ground_truth(pid, site))
    now_ms = time.time() * 1000
    skewed.advance(pid, Churn(changed=0.05, deleted=0.0, added=0.0, archived=0.0))
    after = _by_id(skewed.ground_truth(pid, site))
    changed = {i for i in after if after[i].updated_at != before[i].updated_at}
    assert changed
    for object_id in changed:  # five minutes behind the machine, within the step's second
        moment = after[object_id].updated_at.timestamp() * 1000
        assert now_ms - 301_000 < moment < now_ms - 298_000

    path = "/cms/v3/pages/site-pages"
    async with client(serve(skewed), PORTAL.token) as http:
        newest = (await http.get(path, params={"sort": "-updatedAt", "limit": 100})).json()
        oldest_change = min(after[i].updated_at for i in changed)
        since = (oldest_change - timedelta(milliseconds=1)).isoformat().replace("+00:00", "Z")
        params: dict[str, str | int] = {"updatedAfter": since, "sort": "updatedAt", "limit": 100}
        recent = (await http.get(path, params=params)).json()
        ids = (await http.get(path, params={"property": "id", "limit": 5})).json()
    times = [r["updated"] for r in newest["results"]]
    assert times == sorted(times, reverse=True)
    assert {r["id"] for r in newest["results"][: len(changed)]} == changed
    assert newest["total"] == len([i for i in after.values() if not i.archived])
    assert {r["id"] for r in recent["results"]} == changed
    assert all(set(r) == {"id"} for r in ids["results"])
