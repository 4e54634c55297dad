"""The fetch handler in a runner, against the fake HubSpot: content, resume, parks, failures."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.db import Database
from smuves_sync.db.content import content_sync_get
from smuves_sync.db.jobs import job_get
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import (
    Churn,
    FakeHubSpot,
    FaultKind,
    FaultRule,
    PortalSpec,
    ServerConfig,
    serve_in_thread,
)
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.factories import Factory
from tests.integration.queue_helpers import read
from tests.integration.sync_helpers import (
    TOKEN,
    plant_portal,
    stored_facts,
    sync_settings,
    truth_facts,
)

SPEC = PortalSpec(
    portal_id=7001,
    token=TOKEN,
    seed=3,
    site_pages=230,
    landing_pages=40,
    blog_posts=120,
    hubdb_tables=3,
    rows_per_table=60,
    archived_share=0.1,
    blog_authors=15,
    blog_tags=45,
    url_redirects=130,
    blogs=5,
)


@pytest.fixture
def fake() -> FakeHubSpot:
    return FakeHubSpot([SPEC], ServerConfig(ten_second_limit=None))


@pytest.fixture
def base_url(fake: FakeHubSpot) -> Iterator[str]:
    with serve_in_thread(fake) as url:
        yield url


async def work(
    worker_db: Database, db_url: str, base_url: str, run_id: int | None = None
) -> Runner:
    """Run a worker until the run settles (or, without a run, until nothing is claimable)."""
    settings = sync_settings(db_url, base_url)
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


async def test_a_full_fetch_stores_exactly_what_hubspot_serves(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal)

    runner = await work(worker_db, db_url, base_url)

    assert (runner.stats.completed, runner.stats.failed) == (len(ContentType), 0)
    for content_type in ContentType:
        truth = truth_facts(fake.ground_truth(SPEC.portal_id, content_type))
        assert await stored_facts(db.pool, portal, content_type) == truth, content_type
    jobs = await read(db.pool, "sync_jobs_of_portal", portal_id=portal)
    for job in jobs:
        expected = len(fake.ground_truth(SPEC.portal_id, job["content_type"]))
        assert (job["status"], job["attempts"]) == ("completed", 1)
        assert job["processed"] == job["total"] == expected
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.COMPLETED
    told = await read(db.pool, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_completed"]
    assert "9 of 9 job(s) completed" in told[0]["message"]


async def test_a_second_fetch_marks_vanished_objects_deleted_and_keeps_unchanged_ones(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    first = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    await work(worker_db, db_url, base_url)
    before = {
        r["hubspot_id"]: r for r in await read(db.pool, "sync_content_of_portal", portal_id=portal)
    }
    fake.advance(SPEC.portal_id, Churn(changed=0.1, deleted=0.1, added=0.05, archived=0.0))

    second = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    await work(worker_db, db_url, base_url)

    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert await stored_facts(db.pool, portal, ContentType.SITE_PAGE) == truth_facts(truth)
    live_ids = {t.hubspot_id for t in truth}
    deleted = await stored_facts(db.pool, portal, ContentType.SITE_PAGE, deleted=True)
    assert {d[0] for d in deleted} == set(before) - live_ids
    assert deleted, "the churn deleted some pages"
    after = {
        r["hubspot_id"]: r for r in await read(db.pool, "sync_content_of_portal", portal_id=portal)
    }
    # When the type was last confirmed is one row, not a stamp on every object; a row was
    # written by the second run exactly when its object changed.
    async with db.transaction() as scoped:
        confirmed = await content_sync_get(scoped, portal, ContentType.SITE_PAGE)
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


async def test_a_failed_attempt_resumes_from_its_last_page(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    # Requests of site pages: 1-2 count (live, archived), 3.. pages; the 5th fails twice
    # (the client retries once), so the first attempt stops after two stored pages.
    fake.set_faults(
        (
            FaultRule(
                FaultKind.STATUS, status=503, on_requests=(5, 6), content_type=ContentType.SITE_PAGE
            ),
        )
    )
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])

    await work(worker_db, db_url, base_url, started.run.id)

    [job] = await read(db.pool, "sync_jobs_of_portal", portal_id=portal)
    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert (job["status"], job["attempts"]) == ("completed", 2)
    assert job["processed"] == job["total"] == len(truth)
    assert await stored_facts(db.pool, portal, ContentType.SITE_PAGE) == truth_facts(truth)
    live = len(fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE, archived=False))
    pages = math.ceil(live / 100) + math.ceil((len(truth) - live) / 100)
    # counts + every page once + the two failed tries: the second attempt did not start over;
    # and the two counts at the end that check the listing saw everything
    assert fake.stats(SPEC.portal_id).by_content_type["site_page"] == 2 + pages + 2 + 2


async def test_a_daily_limit_parks_the_job_with_its_cursor_and_no_attempt_spent(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    fake.set_faults(
        (
            FaultRule(
                FaultKind.RATE_LIMIT,
                policy="DAILY",
                on_requests=(4,),
                content_type=ContentType.SITE_PAGE,
            ),
        )
    )
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])

    runner = await work(worker_db, db_url, base_url)

    assert runner.stats.parked == 1
    job = await job_get(db, started.jobs[0].id)
    assert job is not None
    assert (job.status, job.attempts, job.processed) == (JobStatus.PENDING, 0, 100)
    assert job.cursor is not None
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date()
    assert job.run_after == datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=UTC)
    assert "daily" in (job.last_error or "").lower()


async def test_a_revoked_token_fails_every_job_at_once_with_advice(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    fake.revoke_token(TOKEN)
    started = await start_fetch(worker_db, portal)

    await work(worker_db, db_url, base_url)

    jobs = await read(db.pool, "sync_jobs_of_portal", portal_id=portal)
    every = len(ContentType)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("failed", 1)] * every
    assert all("smuves portal add 7001" in j["last_error"] for j in jobs)
    assert all(TOKEN not in j["last_error"] for j in jobs)
    assert fake.unauthorized == every  # one request per job: a 401 is never retried
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.FAILED
    told = await read(db.pool, "sync_notifications_of_run", run_id=started.run.id)
    assert sorted(n["kind"] for n in told) == ["job_failed"] * every + ["run_failed"]


async def test_a_forbidden_type_fails_alone_and_the_run_is_partially_failed(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    fake.set_faults(
        (FaultRule(FaultKind.STATUS, status=403, share=1.0, content_type=ContentType.BLOG_POST),)
    )
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE, ContentType.BLOG_POST])

    await work(worker_db, db_url, base_url)

    jobs = {
        j["content_type"]: j for j in await read(db.pool, "sync_jobs_of_portal", portal_id=portal)
    }
    assert (jobs["site_page"]["status"], jobs["blog_post"]["status"]) == ("completed", "failed")
    assert jobs["blog_post"]["attempts"] == 1
    assert "lacks the 'content' scope" in jobs["blog_post"]["last_error"]
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.PARTIALLY_FAILED
    told = await read(db.pool, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["job_failed", "run_partially_failed"]
    assert "failed: blog_post" in told[1]["message"]
