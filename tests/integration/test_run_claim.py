"""Claiming the jobs of one run only (what `smuves sync` works in-process)."""

from __future__ import annotations

from datetime import timedelta

from smuves_sync.db import Database
from smuves_sync.db.jobs import Claim, job_claim
from smuves_sync.db.runs import run_get, run_jobs
from smuves_sync.models import ContentType, Job, JobStatus, Run, RunStatus
from tests.support import T0, query
from tests.support.factories import Factory


def _run_claim(worker: str, run_id: int) -> Claim:
    """A claim of up to five jobs of run `run_id` only."""
    return Claim(worker, None, limit=5, run_id=run_id)


async def expired_jobs(factory: Factory, run: Run) -> tuple[Job, Job]:
    """Two running jobs of `run` whose lease expired at T0: one at its first attempt, one at
    its last."""
    expired_at = T0 - timedelta(minutes=6)
    again = await factory.job(
        run, status=JobStatus.RUNNING, attempts=1, locked_at=expired_at, locked_by="dead"
    )
    exhausted = await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.RUNNING,
        attempts=3,
        locked_at=expired_at,
        locked_by="dead",
    )
    return again, exhausted


async def test_only_the_runs_own_jobs_are_claimed(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    other = await factory.run()
    await factory.job(other, run_after=T0 - timedelta(hours=1))
    mine = await factory.run()
    planted = [
        await factory.job(mine, content_type=t, run_after=T0 - timedelta(minutes=1))
        for t in (ContentType.SITE_PAGE, ContentType.BLOG_POST)
    ]

    claimed = await job_claim(worker_db, _run_claim("w1", mine.id), now=T0)

    assert [j.id for j in claimed] == [j.id for j in planted]
    assert all(j.status is JobStatus.RUNNING and j.attempts == 1 for j in claimed)
    assert await job_claim(worker_db, _run_claim("w1", mine.id), now=T0) == []
    started = await run_get(db, mine.id)
    assert started is not None and started.status is RunStatus.RUNNING
    untouched = await run_get(db, other.id)
    assert untouched is not None and untouched.status is RunStatus.PENDING


async def test_expired_leases_are_taken_over_or_failed_at_the_last_attempt(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    again, exhausted = await expired_jobs(factory, run)

    claimed = await job_claim(worker_db, _run_claim("w2", run.id), now=T0)

    assert [(j.id, j.attempts, j.locked_by) for j in claimed] == [(again.id, 2, "w2")]
    jobs = {j.id: j for j in await run_jobs(db, run.id)}
    assert jobs[exhausted.id].status is JobStatus.FAILED
    assert "gave up after 3 attempts" in (jobs[exhausted.id].last_error or "")
    told = await query(db, "sync_notifications_of_run", run_id=run.id)
    assert [n["kind"] for n in told] == ["job_failed"]


async def test_other_runs_expired_leases_are_left_alone(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    other = await factory.run(status=RunStatus.RUNNING)
    again, exhausted = await expired_jobs(factory, other)
    mine = await factory.run()

    assert await job_claim(worker_db, _run_claim("w1", mine.id), now=T0) == []

    jobs = {j.id: j for j in await run_jobs(db, other.id)}
    assert [(jobs[j.id].status, jobs[j.id].locked_by) for j in (again, exhausted)] == [
        (JobStatus.RUNNING, "dead"),
        (JobStatus.RUNNING, "dead"),
    ]
    assert await query(db, "sync_notifications_of_run", run_id=other.id) == []
