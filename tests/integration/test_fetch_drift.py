"""A listing that shifts while it runs hides no live object and deletes none by mistake.

HubSpot's `after` cursors are offsets: an object deleted between two page requests moves the
next one back across the page boundary, and the listing never shows it. The fake does the same
(`cursors="offset"`, DRIFT faults). A blog post fetch asks: 1 the live count, 2 the archived
count, 3 the first page, 4 the second page, ….
"""

from __future__ import annotations

import logging

import pytest

from smuves_sync.db import Database
from smuves_sync.db.fetch_seen import fetch_seen_start, fetch_seen_sync_get
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule, PortalSpec
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.runner import Runner
from smuves_sync.workers.sweep import finish_fetch
from tests.support import TOKEN, Sync, query

POSTS = ContentType.BLOG_POST
# The reproduction: 150 posts, so the second page holds the last 50.
SPEC = PortalSpec(portal_id=7101, token=TOKEN, seed=9, blog_posts=150, archived_share=0.0)


def drift(on: int, *, deleted: int = 0, created: int = 0) -> FaultRule:
    return FaultRule(
        FaultKind.DRIFT, on_requests=(on,), content_type=POSTS, deleted=deleted, created=created
    )


pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None, cursors="offset")


async def fetch(sync: Sync, portal: int) -> int:
    """Fetch the portal's posts with a worker until nothing is left; the run's id."""
    started = await start_fetch(sync.worker_db, portal, [POSTS], full=True)
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True
    ).run()
    return started.run.id


async def runs(db: Database, portal: int) -> list[str]:
    return [r["status"] for r in await query(db, "sync_runs_of_portal", portal_id=portal)]


async def test_a_post_deleted_after_the_first_page_leaves_every_live_post_live(sync: Sync) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    first_post = fake.ground_truth(SPEC.portal_id, POSTS)[0].hubspot_id
    fake.set_faults((drift(4, deleted=1),))

    await fetch(sync, portal)

    truth = sync.truth(portal, POSTS)
    live = await sync.stored(portal, POSTS)
    assert set(truth) <= set(live)  # the post that crossed the page boundary too
    assert await sync.stored(portal, POSTS, deleted=True) == []
    # The deleted post was seen (on page 1) before it went: the next fetch confirms it gone.
    assert {fact[0] for fact in set(live) - set(truth)} == {first_post}
    assert await runs(db, portal) == ["completed", "completed"]

    fake.set_faults(())
    await fetch(sync, portal)

    assert await sync.stored(portal, POSTS) == truth
    assert [f[0] for f in await sync.stored(portal, POSTS, deleted=True)] == [first_post]


@pytest.mark.parametrize(
    ("created", "why"),
    [
        (3, "its totals moved while it ran"),
        # Every count and every page's total say 150: only what was created since tells.
        (2, "150 live objects at its start and 2 created since, but 150 now"),
    ],
)
async def test_a_first_fetch_amid_deletions_and_creations_stores_every_live_post(
    sync: Sync, caplog: pytest.LogCaptureFixture, created: int, why: str
) -> None:
    fake, db = sync.fake, sync.db
    caplog.set_level(logging.INFO, logger="smuves_sync.hubspot.client")
    portal = await sync.plant_portal()
    fake.set_faults((drift(4, deleted=2, created=created),))

    await fetch(sync, portal)

    truth = sync.truth(portal, POSTS)
    live = await sync.stored(portal, POSTS)
    # the two posts that crossed the page boundary too
    assert len(truth) == 148 + created and set(truth) <= set(live)
    assert await sync.stored(portal, POSTS, deleted=True) == []
    assert await runs(db, portal) == ["completed"]
    [missed] = [r.getMessage() for r in caplog.records if "may have missed" in r.getMessage()]
    assert why in missed and "listing again by creation time" in missed


@pytest.mark.hubspot(SPEC, ten_second_limit=None, cursors="offset", clock_skew_seconds=-300)
async def test_balanced_drift_is_caught_when_hubspots_clock_trails_ours(sync: Sync) -> None:
    # HubSpot dates the two new posts five minutes before our clock says: within the margin.
    portal = await sync.plant_portal()
    sync.fake.set_faults((drift(4, deleted=2, created=2),))

    await fetch(sync, portal)

    assert set(sync.truth(portal, POSTS)) <= set(await sync.stored(portal, POSTS))
    assert await sync.stored(portal, POSTS, deleted=True) == []


async def test_a_job_resumed_from_a_cursor_saved_before_the_upgrade_finishes(sync: Sync) -> None:
    fake, db, factory, worker_db = sync.fake, sync.db, sync.factory, sync.worker_db
    portal = await sync.plant_portal()
    # A listing that keeps no baseline writes cursors as the release before did.
    async with HubSpotClient(portal, TOKEN, sync.settings, RateLimitRegistry()) as client:
        listing = client.pages(str(POSTS))
        first = await anext(listing)
        await listing.aclose()
    assert Cursor.decode(first.cursor, str(POSTS)).baseline is None
    run = await factory.run(portal, full_read=True)
    job = await factory.job(run, content_type=POSTS, cursor=first.cursor, processed=100, total=150)
    # the record of what the job saw, as its first attempt left it (planted as the operator)
    async with db.transaction() as scoped:
        await fetch_seen_start(scoped, job.id, portal)
    await factory.seen(job, *(item.hubspot_id for item in first.items))
    fake.reset_stats()

    await Runner(worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True).run()

    [done] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert (done["status"], done["processed"]) == ("completed", 150)
    rest = {f[0] for f in sync.truth(portal, POSTS)} - {i.hubspot_id for i in first.items}
    assert {f[0] for f in await sync.stored(portal, POSTS)} == rest
    # The second page, the empty archived one, the two counts: checked as it was begun.
    assert fake.stats(SPEC.portal_id).by_content_type["blog_post"] == 1 + 1 + 2


async def test_an_unchanged_listing_needs_no_second_pass(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    fake.reset_stats()

    await fetch(sync, portal)

    # two counts, two pages (the archived listing is empty: one answer), two counts at the end
    # and the live posts created since the listing began (none: no second pass)
    assert fake.stats(SPEC.portal_id).by_content_type["blog_post"] == 2 + 2 + 1 + 2 + 1
    assert await sync.stored(portal, POSTS) == sync.truth(portal, POSTS)


async def test_the_sweep_marks_deleted_only_what_hubspot_answers_404_for(sync: Sync) -> None:
    fake, db, factory, worker_db = sync.fake, sync.db, sync.factory, sync.worker_db
    portal = await sync.plant_portal()
    run_id = await fetch(sync, portal)
    [kept, archived, *seen] = [t.hubspot_id for t in fake.ground_truth(SPEC.portal_id, POSTS)]
    fake.set_faults(())
    # Archive one post behind the store's back: HubSpot moved it to the archived listing.
    fake.portal(SPEC.portal_id).collection(POSTS).life.archived[1] = 1
    run = await factory.run(portal, status=RunStatus.RUNNING)
    job = await factory.job(run, content_type=POSTS, status=JobStatus.RUNNING)
    await factory.content_item(run, "300000000999", content_type=POSTS)  # never in HubSpot
    await factory.seen(job, *seen)  # the listing saw all but the first two and the planted one
    settings = sync.settings
    ctx = JobContext(job, worker_db, settings, RateLimitRegistry(), "test-worker")
    fake.reset_stats()

    async with HubSpotClient(portal, TOKEN, settings, ctx.limits) as client:
        done = await finish_fetch(ctx, client, job)

    assert done.status is JobStatus.COMPLETED and done.processed == len(seen) + 2
    rows = {r["hubspot_id"]: r for r in await query(db, "sync_content_of_portal", portal_id=portal)}
    assert rows[kept]["deleted_at"] is None and not rows[kept]["archived"]
    assert rows[kept]["changed_run"] == run_id  # unchanged: not written again
    assert rows[archived]["deleted_at"] is None and rows[archived]["archived"]
    assert rows[archived]["changed_run"] == run.id
    assert rows["300000000999"]["deleted_at"] is not None
    assert [r for r in rows.values() if r["deleted_at"] is not None] == [rows["300000000999"]]
    # one batch read of live posts (207: two not there), one of archived ones (207): the
    # post neither returned is gone, no need to ask for it by id
    assert fake.stats(SPEC.portal_id).by_status == {207: 2}
    async with worker_db.for_portal(portal) as scoped:
        confirmed = await fetch_seen_sync_get(scoped, portal, POSTS)
    assert confirmed is not None and (confirmed.run_id, confirmed.job_id) == (run.id, job.id)
    assert (confirmed.seen, confirmed.deleted) == (len(seen) + 2, 1)
    assert await query(db, "sync_seen_of_job", job_id=job.id) == []


async def test_a_job_that_lost_what_it_saw_lists_again_from_the_start(
    sync: Sync, caplog: pytest.LogCaptureFixture
) -> None:
    fake, db, factory, worker_db = sync.fake, sync.db, sync.factory, sync.worker_db
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    # A job resumed after Postgres crashed: its cursor says the live pass is done, but the
    # unlogged fetch_seen came back empty, marker and all.
    run = await factory.run(portal, full_read=True)
    after_live = Cursor(str(POSTS), archived=True).encode()
    await factory.job(run, content_type=POSTS, cursor=after_live, processed=150, total=150)
    fake.reset_stats()

    settings = sync.settings
    await Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=1, burst=True).run()

    assert any("listing saw before is not recorded" in r.getMessage() for r in caplog.records)
    [*_, job] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert (job["status"], job["processed"]) == ("completed", 150)
    assert await sync.stored(portal, POSTS, deleted=True) == []
    # the live pages were listed again (2 pages, the archived one, two counts at the end and
    # the live posts created since it began again)
    assert fake.stats(SPEC.portal_id).by_content_type["blog_post"] == 2 + 1 + 2 + 1
