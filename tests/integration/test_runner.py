"""The runner: lost leases, graceful stops, wake-ups and database restarts, with real handlers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec, ServerConfig, serve_in_thread
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.factories import Factory
from tests.support import TOKEN, plant_portal, query, stored_facts, sync_settings, truth_facts

SPEC = PortalSpec(portal_id=7101, token=TOKEN, seed=8, site_pages=1200, archived_share=0.05)


@pytest.fixture
def fake() -> FakeHubSpot:
    # Slow enough that a fetch of 12 pages is still going when the test steps in.
    return FakeHubSpot([SPEC], ServerConfig(ten_second_limit=None, latency_ms=60))


@pytest.fixture
def base_url(fake: FakeHubSpot) -> Iterator[str]:
    with serve_in_thread(fake) as url:
        yield url


async def processed_at_least(db: Database, job_id: int, n: int, timeout: float = 30) -> None:
    """Poll until the job has checkpointed `n` objects (fail at the deadline)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        job = await db.job_get(job_id)
        assert job is not None
        if job.processed >= n:
            return
        assert asyncio.get_running_loop().time() < deadline, (
            f"job {job_id} stuck at {job.processed}"
        )
        await asyncio.sleep(0.05)


async def stored_count(db: Database, portal: int) -> int:
    return len(await query(db, "sync_content_of_portal", portal_id=portal))


async def test_a_lost_lease_rolls_back_the_page_and_stops_the_handler(
    base_url: str, factory: Factory, worker_db: Database, db: Database, db_url: str
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    job_id = started.jobs[0].id
    runner = Runner(
        worker_db, sync_settings(db_url, base_url), kinds=[JobKind.FETCH], concurrency=1, burst=True
    )
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, job_id, 200)
    await query(db, "sync_steal_lease", job_id=job_id)
    await asyncio.wait_for(running, 30)

    assert (runner.stats.lost, runner.stats.completed, runner.stats.failed) == (1, 0, 0)
    job = await db.job_get(job_id)
    assert job is not None and job.status is JobStatus.RUNNING  # the new holder's now
    assert job.total is not None and job.processed < job.total
    # Nothing after the takeover was kept: the rows are exactly the checkpointed pages.
    assert await stored_count(db, portal) == job.processed


async def test_a_stop_hands_running_jobs_back_with_their_cursor(
    base_url: str, factory: Factory, worker_db: Database, db: Database, db_url: str
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    job_id = started.jobs[0].id
    settings = sync_settings(db_url, base_url, shutdown_grace_seconds=0)
    runner = Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=2)
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, job_id, 200)
    runner.request_stop()
    stats = await asyncio.wait_for(running, 30)

    assert (stats.released, stats.completed, stats.failed) == (1, 0, 0)
    job = await db.job_get(job_id)
    assert job is not None
    assert (job.status, job.attempts, job.lease_token) == (JobStatus.PENDING, 0, None)
    assert job.cursor is not None and job.processed >= 200
    assert await stored_count(db, portal) == job.processed


async def test_a_stop_lets_jobs_finish_within_the_grace_period(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    settings = sync_settings(db_url, base_url, shutdown_grace_seconds=60)
    runner = Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=1)
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, started.jobs[0].id, 100)
    runner.request_stop()
    stats = await asyncio.wait_for(running, 60)

    assert (stats.completed, stats.released) == (1, 0)
    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert await stored_facts(db, portal, ContentType.SITE_PAGE) == truth_facts(truth)


async def test_an_idle_runner_is_woken_by_a_new_job_long_before_its_next_poll(
    base_url: str,
    factory: Factory,
    worker_db: Database,
    worker_pool: Pool,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    settings = sync_settings(db_url, base_url, poll_interval_seconds=60)
    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=1,
        wakeups_conninfo=db_url,
    )
    running = asyncio.create_task(runner.run())
    try:
        while runner.stats.claim_rounds == 0:  # its first look found nothing; now it waits
            await asyncio.sleep(0.01)
        started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
        is_settled = settled(worker_db, portal, started.run.id)
        deadline = asyncio.get_running_loop().time() + 30  # half the poll interval
        while not await is_settled():
            assert asyncio.get_running_loop().time() < deadline, "not woken by NOTIFY"
            await asyncio.sleep(0.05)
    finally:
        runner.request_stop()
        await asyncio.wait_for(running, 30)
    assert runner.stats.completed == 1
    assert runner.stats.claim_rounds <= 4  # woken, not spinning


async def test_the_runner_rides_out_a_database_restart(
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    db: Database,
    db_url: str,
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    runner = Runner(
        worker_db,
        sync_settings(db_url, base_url),
        kinds=[JobKind.FETCH],
        concurrency=1,
        until=settled(worker_db, portal, started.run.id),
        wakeups_conninfo=db_url,
    )
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, started.jobs[0].id, 200)
    [killed] = await query(db, "sync_terminate_backends")
    assert killed["n"] >= 2  # at least the worker's page transaction and its listener
    await asyncio.wait_for(running, 60)

    await db.pool.check()  # this test's own idle connections died too
    run = await db.run_get(started.run.id)
    assert run is not None and run.status is RunStatus.COMPLETED
    truth = fake.ground_truth(SPEC.portal_id, ContentType.SITE_PAGE)
    assert await stored_facts(db, portal, ContentType.SITE_PAGE) == truth_facts(truth)
