"""The fetch handler in a runner, against the fake HubSpot: content, resume, parks, failures."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.db.fetch_seen import fetch_seen_sync_get
from smuves_sync.db.jobs import job_get
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import Churn, FaultKind, FaultRule
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync, fake_portal, query

SPEC = fake_portal(7001, "230,40,120,3,60,15,45,130,5", seed=3, archived_share=0.1)

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


async def work(sync: Sync, run_id: int | None = None) -> Runner:
    """Run a worker until the run settles (or, without a run, until nothing is claimable)."""
    worker_db, settings = sync.worker_db, sync.settings
    if run_id is None:
        runner = Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=3, burst=True)
    else:
        runner = Runner(
            worker_db,
            settings,
            kinds=[JobKind.FETCH],
            concurrency=3,
            until=settled(worker_db, SPEC.portal_id, run_id),
        )
    await runner.run()
    return runner


async def test_a_full_fetch_stores_exactly_what_hubspot_serves(sync: Sync) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    started = await start_fetch(sync.worker_db, portal)

    runner = await work(sync)

    assert (runner.stats.completed, runner.stats.failed) == (len(ContentType), 0)
    for content_type in ContentType:
        truth = sync.truth(portal, content_type)
        assert await sync.stored(portal, content_type) == truth, content_type
    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    for job in jobs:
        expected = len(fake.ground_truth(SPEC.portal_id, job["content_type"]))
        assert (job["status"], job["attempts"]) == ("completed", 1)
        assert job["processed"] == job["total"] == expected
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.COMPLETED
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_completed"]
    assert "9 of 9 job(s) completed" in told[0]["message"]


async def test_a_second_fetch_marks_vanished_objects_deleted_and_keeps_unchanged_ones(
    sync: Sync,
) -> None:
    fake, db, worker_db = sync.fake, sync.db, sync.worker_db
    portal = await sync.plant_portal()
    first = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    await work(sync)
    before = {
        r["hubspot_id"]: r for r in await query(db, "sync_content_of_portal", portal_id=portal)
    }
    fake.advance(SPEC.portal_id, Churn(changed=0.1, deleted=0.1, added=0.05, archived=0.0))

    second = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    await work(sync)

    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert await sync.stored(portal, ContentType.SITE_PAGE) == sync.truth(
        portal, ContentType.SITE_PAGE
    )
    live_ids = {t.hubspot_id for t in truth}
    deleted = await sync.stored(portal, ContentType.SITE_PAGE, deleted=True)
    assert {d[0] for d in deleted} == set(before) - live_ids
    assert deleted, "the churn deleted some pages"
    after = {
        r["hubspot_id"]: r for r in await query(db, "sync_content_of_portal", portal_id=portal)
    }
    # When the type was last confirmed is one row, not a stamp on every object; a row was
    # written by the second run exactly when its object changed.
    async with db.transaction() as scoped:
        confirmed = await fetch_seen_sync_get(scoped, portal, ContentType.SITE_PAGE)
    assert confirmed is not None and confirmed.run_id == second.run.id
    for hubspot_id in live_ids:
        row = after[hubspot_id]
        if hubspot_id in before:
            assert row["first_seen_run"] == first.run.id
            same = before[hubspot_id]["hubspot_updated_at"] == row["hubspot_updated_at"]
            assert (before[hubspot_id]["content_hash"] == row["content_hash"]) == same
            assert row["changed_run"] == (first.run.id if same else second.run.id)
            assert (row["xmin"] == before[hubspot_id]["xmin"]) == same
        else:
            assert row["first_seen_run"] == row["changed_run"] == second.run.id


async def test_a_failed_attempt_resumes_from_its_last_page(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    # Requests of site pages: 1-2 count (live, archived), 3.. pages; the 5th fails twice
    # (the client retries once), so the first attempt stops after two stored pages.
    fake.set_faults(
        (
            FaultRule(
                FaultKind.STATUS, status=500, on_requests=(5, 6), content_type=ContentType.SITE_PAGE
            ),
        )
    )
    started = await start_fetch(sync.worker_db, portal, [ContentType.SITE_PAGE])

    await work(sync, started.run.id)

    [job] = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert (job["status"], job["attempts"]) == ("completed", 2)
    assert job["processed"] == job["total"] == len(truth)
    assert await sync.stored(portal, ContentType.SITE_PAGE) == sync.truth(
        portal, ContentType.SITE_PAGE
    )
    live = len(fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE, archived=False))
    pages = math.ceil(live / 100) + math.ceil((len(truth) - live) / 100)
    # counts + every page once + the two failed tries: the second attempt did not start over;
    # and at the end, per pass, the count and what was created since the listing began,
    # which check that it saw everything
    assert fake.stats(SPEC.portal_id).by_content_type["site_page"] == 2 + pages + 2 + 2 + 2


async def test_a_daily_limit_parks_the_job_with_its_cursor_and_no_attempt_spent(
    sync: Sync,
) -> None:
    portal = await sync.plant_portal()
    sync.fake.set_faults(
        (
            FaultRule(
                FaultKind.RATE_LIMIT,
                policy="DAILY",
                on_requests=(4,),
                content_type=ContentType.SITE_PAGE,
            ),
        )
    )
    started = await start_fetch(sync.worker_db, portal, [ContentType.SITE_PAGE])

    runner = await work(sync)

    assert runner.stats.parked == 1
    job = await job_get(sync.db, started.jobs[0].id)
    assert job is not None
    assert (job.status, job.attempts, job.processed) == (JobStatus.PENDING, 0, 100)
    assert job.cursor is not None
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
    assert job.run_after == datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=UTC)
    assert "daily" in (job.last_error or "").lower()


async def test_a_revoked_token_fails_every_job_at_once_with_advice(sync: Sync) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    fake.revoke_token(TOKEN)
    started = await start_fetch(sync.worker_db, portal)

    # One job at a time: the first job's first request is the only one HubSpot refuses; its
    # 401 fails the whole run, so no other job of it is claimed.
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True
    ).run()

    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    every = len(ContentType)
    assert sorted(j["attempts"] for j in jobs) == [0] * (every - 1) + [1]
    assert {j["status"] for j in jobs} == {"failed"}
    assert all("smuves portal add 7001" in j["last_error"] for j in jobs)
    assert all("reconnect the portal" in j["last_error"] for j in jobs)
    assert all(TOKEN not in j["last_error"] for j in jobs)
    assert fake.unauthorized == 1 and fake.stats(portal).requests == 0
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.FAILED
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    # One note for the run, saying once why all its jobs failed.
    [note] = told
    assert note["kind"] == "run_failed"
    assert note["message"].count("HubSpot refused the portal's token") == 1


async def test_a_forbidden_type_fails_alone_and_the_run_is_partially_failed(sync: Sync) -> None:
    db = sync.db
    portal = await sync.plant_portal()
    sync.fake.set_faults(
        (FaultRule(FaultKind.STATUS, status=403, share=1.0, content_type=ContentType.BLOG_POST),)
    )
    started = await start_fetch(
        sync.worker_db, portal, [ContentType.SITE_PAGE, ContentType.BLOG_POST]
    )

    await work(sync)

    jobs = {j["content_type"]: j for j in await query(db, "sync_jobs_of_portal", portal_id=portal)}
    assert (jobs["site_page"]["status"], jobs["blog_post"]["status"]) == ("completed", "failed")
    assert jobs["blog_post"]["attempts"] == 1
    assert "lacks the 'content' scope" in jobs["blog_post"]["last_error"]
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.PARTIALLY_FAILED
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_partially_failed"]
    assert "failed: blog_post" in told[0]["message"]
    assert "lacks the 'content' scope" in told[0]["message"]
