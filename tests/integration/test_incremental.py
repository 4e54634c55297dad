"""Incremental fetches against the fake HubSpot: what changed is read, nothing else, and the
store stays exactly what HubSpot serves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from smuves_sync.hubspot import registry
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import Churn, FaultKind, FaultRule, PortalSpec
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync, query

SPEC = PortalSpec(
    portal_id=7301,
    token=TOKEN,
    seed=5,
    site_pages=450,
    landing_pages=40,
    blog_posts=130,
    hubdb_tables=3,
    rows_per_table=80,
    archived_share=0.1,
    blog_authors=12,
    blog_tags=30,
    url_redirects=25,
    blogs=3,
)

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


async def fetch(sync: Sync, portal: int, *, full: bool = False, **settings: Any) -> int:
    """One fetch of every type, worked until nothing is left; its run id."""
    started = await start_fetch(sync.worker_db, portal, full=full)
    worker_settings = sync.settings_with(**settings) if settings else sync.settings
    await Runner(
        sync.worker_db, worker_settings, kinds=[JobKind.FETCH], concurrency=3, burst=True
    ).run()
    return started.run.id


async def reads(sync: Sync, portal: int, run_id: int) -> dict[str, dict[str, Any]]:
    rows = await query(sync.db, "sync_reads_of_portal", portal_id=portal)
    return {r["content_type"]: r for r in rows if r["run_id"] == run_id}


async def exact(sync: Sync, portal: int) -> None:
    for content_type in ContentType:
        truth = sync.truth(portal, content_type)
        assert await sync.stored(portal, content_type) == truth, content_type


async def test_a_second_fetch_reads_only_what_changed_and_stays_exact(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    first = await fetch(sync, portal)
    assert {r["mode"] for r in (await reads(sync, portal, first)).values()} == {"full"}
    full_requests = fake.stats(portal).requests

    fake.reset_stats()
    unchanged = await fetch(sync, portal)
    read = await reads(sync, portal, unchanged)
    assert {r["mode"] for r in read.values()} == {"incremental"}
    assert sum(r["changed"] + r["deleted"] for r in read.values()) == 0
    # Two requests a type (live and archived, newest first), one for the HubDB tables.
    assert fake.stats(portal).requests <= 2 * len(ContentType)
    assert fake.stats(portal).requests < full_requests / 4
    await exact(sync, portal)

    # Updates, creations, archivals, un-archivals, deletions; HubDB rows published.
    churn = Churn(changed=0.05, deleted=0.02, added=0.03, archived=0.02, unarchived=0.3)
    fake.advance(portal, churn)
    fake.reset_stats()
    changed = await fetch(sync, portal)
    read = await reads(sync, portal, changed)
    assert {r["mode"] for r in read.values()} == {"incremental"}
    assert read["site_page"]["changed"] > 0 and read["site_page"]["deleted"] > 0
    assert read["hubdb_row"]["changed"] > 0
    await exact(sync, portal)
    for content_type in ContentType:
        gone = await sync.stored(portal, content_type, deleted=True)
        assert sum(1 for _ in gone) == read[str(content_type)]["deleted"] or content_type in (
            ContentType.HUBDB_ROW,
        )


async def test_a_table_deleted_in_hubspot_takes_its_rows_and_a_published_table_is_reread(
    sync: Sync,
) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    tables = (ContentType.HUBDB_TABLE,)
    fake.advance(portal, Churn(changed=0.0, deleted=0.34, added=0.0, archived=0.0, types=tables))
    rows = (ContentType.HUBDB_ROW,)
    fake.advance(portal, Churn(changed=0.1, deleted=0.0, added=0.05, archived=0.0, types=rows))
    run = await fetch(sync, portal)
    await exact(sync, portal)
    read = await reads(sync, portal, run)
    assert read["hubdb_row"]["mode"] == "incremental"
    assert read["hubdb_row"]["deleted"] >= SPEC.rows_per_table  # the deleted table's rows


@pytest.mark.hubspot(SPEC, ten_second_limit=None, clock_skew_seconds=-300)
async def test_a_change_made_while_the_last_fetch_listed_is_read_next_time(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    # While the next fetch lists the site pages (its third page, after two counts), people
    # edit three pages it has already read; HubSpot's clock, five minutes behind, dates the
    # edits before that fetch's listing began.
    pages = ContentType.SITE_PAGE
    drift = FaultRule(FaultKind.DRIFT, on_requests=(5,), content_type=pages, edited=3)
    fake.set_faults((drift,))
    await fetch(sync, portal, full=True)
    fake.set_faults(())
    stale = set(await sync.stored(portal, pages)) - set(sync.truth(portal, pages))
    assert len(stale) == 3

    # The overlap reaches back past them: the next (incremental) fetch reads them.
    run = await fetch(sync, portal)
    assert (await reads(sync, portal, run))["site_page"]["mode"] == "incremental"
    await exact(sync, portal)


@pytest.mark.hubspot(SPEC, ten_second_limit=None, clock_skew_seconds=-300)
async def test_a_fake_whose_clock_is_behind_is_covered_by_the_overlap(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    # HubSpot dates these edits five minutes before the last fetch's listing began.
    fake.advance(portal, Churn(changed=0.1, deleted=0.0, added=0.05, archived=0.0))
    await fetch(sync, portal)
    await exact(sync, portal)


@pytest.mark.hubspot(SPEC, ten_second_limit=None, clock_skew_seconds=-300)
async def test_without_an_overlap_a_clock_behind_loses_edits(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    fake.advance(portal, Churn(changed=0.1, deleted=0.0, added=0.0, archived=0.0))
    await fetch(sync, portal, incremental_overlap_seconds=0)
    truth = sync.truth(portal, ContentType.SITE_PAGE)
    assert await sync.stored(portal, ContentType.SITE_PAGE) != truth
    # A full read puts it right.
    await fetch(sync, portal, full=True)
    await exact(sync, portal)


async def test_full_reads_when_asked_for_and_when_the_last_is_old(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    forced = await fetch(sync, portal, full=True)
    read = await reads(sync, portal, forced)
    assert {(r["mode"], r["reason"]) for r in read.values()} == {
        ("full", "a full read was asked for")
    }

    await query(sync.db, "sync_age_last_full_read", portal_id=portal, days=8)
    fake.advance(portal, Churn(changed=0.05, deleted=0.01, added=0.01, archived=0.01))
    aged = await fetch(sync, portal)
    read = await reads(sync, portal, aged)
    assert {r["mode"] for r in read.values()} == {"full"}
    assert all("older than 7 day(s)" in r["reason"] for r in read.values())
    await exact(sync, portal)
    again = await fetch(sync, portal)
    assert {r["mode"] for r in (await reads(sync, portal, again)).values()} == {"incremental"}


async def test_a_type_without_change_filters_is_read_in_full(
    sync: Sync, monkeypatch: pytest.MonkeyPatch
) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    tags = registry.DEFAULT_REGISTRY.get("blog_tag")
    without = registry.DEFAULT_REGISTRY._specs["blog_tag"]
    assert without is tags
    specs = dict(registry.DEFAULT_REGISTRY._specs)
    specs["blog_tag"] = replace(tags, change_filters=False)
    monkeypatch.setattr(registry.DEFAULT_REGISTRY, "_specs", specs)
    sync.fake.advance(portal, Churn(changed=0.2, deleted=0.05, added=0.05, archived=0.0))
    run = await fetch(sync, portal)
    read = await reads(sync, portal, run)
    assert read["blog_tag"]["mode"] == "full"
    assert "no change filters" in read["blog_tag"]["reason"]
    assert read["blog_post"]["mode"] == "incremental"
    await exact(sync, portal)
