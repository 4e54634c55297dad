"""The runner: lost leases, graceful stops, wake-ups and database restarts, with real handlers."""

from __future__ import annotations

import asyncio

import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import PortalSpec
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync, eventually, query

SPEC = PortalSpec(portal_id=7101, token=TOKEN, seed=8, site_pages=1200, archived_share=0.05)

# Slow enough that a fetch of 12 pages is still going when the test steps in.
pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None, latency_ms=60)


async def processed_at_least(db: Database, job_id: int, n: int, timeout: float = 30) -> None:
    """Wait until the job has checkpointed `n` objects (fail at the deadline)."""

    async def checkpointed() -> bool:
        job = await job_get(db, job_id)
        assert job is not None
        assert job.processed >= n, f"job {job_id} stuck at {job.processed}"
        return True

    await eventually(checkpointed, timeout)


async def stored_count(db: Database, portal: int) -> int:
    return len(await query(db, "sync_content_of_portal", portal_id=portal))


async def start_site_pages(sync: Sync) -> tuple[int, int, int]:
    """The portal in the database and a fetch of its site pages: (portal, run id, job id)."""
    portal = await sync.plant_portal()
    started = await start_fetch(sync.worker_db, portal, [ContentType.SITE_PAGE])
    return portal, started.run.id, started.jobs[0].id


async def test_a_lost_lease_rolls_back_the_page_and_stops_the_handler(sync: Sync) -> None:
    db = sync.db
    portal, _, job_id = await start_site_pages(sync)
    runner = Runner(sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True)
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, job_id, 200)
    await query(db, "sync_steal_lease", job_id=job_id)
    await asyncio.wait_for(running, 30)

    assert (runner.stats.lost, runner.stats.completed, runner.stats.failed) == (1, 0, 0)
    job = await job_get(db, job_id)
    assert job is not None and job.status is JobStatus.RUNNING  # the new holder's now
    assert job.total is not None and job.processed < job.total
    # Nothing after the takeover was kept: the rows are exactly the checkpointed pages.
    assert await stored_count(db, portal) == job.processed


async def test_a_stop_hands_running_jobs_back_with_their_cursor(sync: Sync) -> None:
    db = sync.db
    portal, _, job_id = await start_site_pages(sync)
    settings = sync.settings_with(shutdown_grace_seconds=0)
    runner = Runner(sync.worker_db, settings, kinds=[JobKind.FETCH], concurrency=2)
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, job_id, 200)
    runner.request_stop()
    stats = await asyncio.wait_for(running, 30)

    assert (stats.released, stats.completed, stats.failed) == (1, 0, 0)
    job = await job_get(db, job_id)
    assert job is not None
    assert (job.status, job.attempts, job.lease_token) == (JobStatus.PENDING, 0, None)
    assert job.cursor is not None and job.processed >= 200
    assert await stored_count(db, portal) == job.processed


async def test_a_stop_lets_jobs_finish_within_the_grace_period(sync: Sync) -> None:
    portal, _, job_id = await start_site_pages(sync)
    settings = sync.settings_with(shutdown_grace_seconds=60)
    runner = Runner(sync.worker_db, settings, kinds=[JobKind.FETCH], concurrency=1)
    running = asyncio.create_task(runner.run())

    await processed_at_least(sync.db, job_id, 100)
    runner.request_stop()
    stats = await asyncio.wait_for(running, 60)

    assert (stats.completed, stats.released) == (1, 0)
    assert await sync.stored(portal, ContentType.SITE_PAGE) == sync.truth(
        portal, ContentType.SITE_PAGE
    )


async def test_an_idle_runner_is_woken_by_a_new_job_long_before_its_next_poll(
    sync: Sync,
) -> None:
    worker_db = sync.worker_db
    portal = await sync.plant_portal()
    settings = sync.settings_with(poll_interval_seconds=60)
    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=1,
        wakeups_conninfo=sync.db_url,
    )
    running = asyncio.create_task(runner.run())
    try:
        # its first look found nothing; now it waits
        await eventually(
            lambda: runner.stats.claim_rounds > 0, every=0.01, what="the runner's first look"
        )
        started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
        is_settled = settled(worker_db, portal, started.run.id)
        await eventually(is_settled, 30, what="woken by NOTIFY")  # half the poll interval
    finally:
        runner.request_stop()
        await asyncio.wait_for(running, 30)
    assert runner.stats.completed == 1
    assert runner.stats.claim_rounds <= 4  # woken, not spinning


async def test_the_runner_rides_out_a_database_restart(sync: Sync) -> None:
    db = sync.db
    portal, run_id, job_id = await start_site_pages(sync)
    runner = Runner(
        sync.worker_db,
        sync.settings,
        kinds=[JobKind.FETCH],
        concurrency=1,
        until=settled(sync.worker_db, portal, run_id),
        wakeups_conninfo=sync.db_url,
    )
    running = asyncio.create_task(runner.run())

    await processed_at_least(db, job_id, 200)
    [killed] = await query(db, "sync_terminate_backends")
    assert killed["n"] >= 2  # at least the worker's page transaction and its listener
    await asyncio.wait_for(running, 60)

    await db.pool.check()  # this test's own idle connections died too
    run = await run_get(db, run_id)
    assert run is not None and run.status is RunStatus.COMPLETED
    assert await sync.stored(portal, ContentType.SITE_PAGE) == sync.truth(
        portal, ContentType.SITE_PAGE
    )
