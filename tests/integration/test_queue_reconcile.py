"""reconcile_stuck_runs heals runs of many users, called through the RLS-bound worker role."""

from __future__ import annotations

from collections.abc import Sequence

from smuves_sync.db import Database
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobStatus, Run, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import T0
from tests.support.factories import Factory

TYPES = list(ContentType)


async def _run_with_jobs(
    factory: Factory, statuses: Sequence[JobStatus], run_status: RunStatus = RunStatus.RUNNING
) -> Run:
    owner = await factory.user()  # a different user (and portal) for every run
    portal = await factory.portal(owner)
    run = await factory.run(portal, owner=owner, status=run_status)
    for content_type, status in zip(TYPES, statuses, strict=False):
        await factory.job(run, content_type=content_type, status=status)
    return run


async def test_reconcile_through_the_worker_role_heals_runs_of_several_users(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    done, failed, stopped = JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED
    all_completed = await _run_with_jobs(factory, [done, done, done])
    mixed = await _run_with_jobs(factory, [done, failed, done])
    all_failed = await _run_with_jobs(factory, [failed, failed])
    unfinished = await _run_with_jobs(factory, [done, JobStatus.RUNNING, failed])
    waiting = await _run_with_jobs(factory, [JobStatus.PENDING], RunStatus.PENDING)
    with_a_stop = await _run_with_jobs(factory, [done, stopped])
    pending_but_done = await _run_with_jobs(factory, [done], RunStatus.PENDING)
    no_jobs = await _run_with_jobs(factory, [])
    already_settled = await _run_with_jobs(factory, [done, failed], RunStatus.COMPLETED)

    # The worker session names no portal: row-level security would hide every run from it,
    # so this only works because the function is SECURITY DEFINER.
    healed = await Queue(worker_db, settings).reconcile(now=T0)

    assert {r.id: r.status for r in healed} == {
        all_completed.id: RunStatus.COMPLETED,
        mixed.id: RunStatus.PARTIALLY_FAILED,
        all_failed.id: RunStatus.FAILED,
        with_a_stop.id: RunStatus.STOPPED,
        pending_but_done.id: RunStatus.COMPLETED,
    }
    assert all(r.finished_at == T0 for r in healed)
    expected_unchanged = {
        unfinished.id: RunStatus.RUNNING,
        waiting.id: RunStatus.PENDING,
        no_jobs.id: RunStatus.RUNNING,
        already_settled.id: RunStatus.COMPLETED,
    }
    for run_id, status in expected_unchanged.items():
        run = await run_get(db, run_id)
        assert run is not None and run.status is status and run.finished_at is None
    assert await Queue(worker_db, settings).reconcile(now=T0) == []


async def test_reconcile_marks_running_a_pending_run_whose_jobs_started(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await _run_with_jobs(factory, [JobStatus.RUNNING, JobStatus.PENDING], RunStatus.PENDING)
    assert await Queue(worker_db, settings).reconcile(now=T0) == []
    started = await run_get(db, run.id)
    assert started is not None
    assert (started.status, started.started_at) == (RunStatus.RUNNING, T0)


async def test_the_last_job_finishing_settles_its_run(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await factory.run(content_types=[ContentType.SITE_PAGE, ContentType.BLOG_POST])
    await factory.job(run, content_type=ContentType.SITE_PAGE)
    await factory.job(run, content_type=ContentType.BLOG_POST)
    queue = Queue(worker_db, settings)
    first, second = await queue.claim(None, limit=2, now=T0)

    await queue.complete(first, processed=10, now=T0)
    still = await run_get(db, run.id)
    assert still is not None and still.status is RunStatus.RUNNING
    await queue.fail(second, "403: missing scope", retryable=False, now=T0)
    settled = await run_get(db, run.id)
    assert settled is not None
    assert (settled.status, settled.finished_at) == (RunStatus.PARTIALLY_FAILED, T0)
