"""The operator queries and functions on planted rows: exact figures, boundaries, refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from smuves_sync.db import Database
from smuves_sync.db.job_requeues import RequeueOutcome, job_requeue, jobs_retry_failed
from smuves_sync.db.jobs import Claim, job_claim, job_complete, job_list
from smuves_sync.db.runs import PruneCounts, run_jobs, run_list, runs_prune
from smuves_sync.db.stats import DepthCount, PendingSummary, queue_stats
from smuves_sync.errors import DatabaseError
from smuves_sync.export_files import ExportFile
from smuves_sync.models import ContentType, ExportFormat, JobKind, JobStatus, RunStatus
from tests.support import db_now, query
from tests.support.factories import Factory

T = datetime(2031, 1, 1, 12, 0, tzinfo=UTC)
# the database's leases (job_leases)
FETCH_LEASE = timedelta(minutes=5)
FETCH, EXPORT = JobKind.FETCH, JobKind.EXPORT


async def _job_row(db: Database, job_id: int) -> dict[str, object]:
    [row] = await query(db, "opscheck_job", job_id=job_id)
    return row


async def _run_row(db: Database, run_id: int) -> dict[str, object]:
    [row] = await query(db, "opscheck_run", run_id=run_id)
    return row


# -- stats ---------------------------------------------------------------------------------------


async def test_stats_on_planted_rows(factory: Factory, db: Database) -> None:
    async def job(kind: JobKind, status: JobStatus, **fields: Any) -> int:
        # A run (and portal) of its own per job: the in-flight index allows one per type.
        planted = await factory.job(await factory.run(kind=kind), status=status, **fields)
        return planted.id

    await job(FETCH, JobStatus.PENDING, run_after=T - timedelta(minutes=10))
    await job(FETCH, JobStatus.PENDING, run_after=T - timedelta(minutes=1))
    await job(FETCH, JobStatus.PENDING, run_after=T + timedelta(minutes=5))  # backing off
    await job(FETCH, JobStatus.RUNNING, locked_at=T - timedelta(minutes=1))
    # Exactly one lease old: still alive (the lease is over only once it is strictly older).
    await job(FETCH, JobStatus.RUNNING, locked_at=T - FETCH_LEASE)
    stale_fetch = await job(FETCH, JobStatus.RUNNING, locked_at=T - timedelta(minutes=6))
    for _ in range(2):
        await job(FETCH, JobStatus.COMPLETED)
    await job(FETCH, JobStatus.FAILED)
    await job(EXPORT, JobStatus.PENDING, run_after=T - timedelta(seconds=30))
    stale_export = await job(EXPORT, JobStatus.RUNNING, locked_at=T - timedelta(minutes=3))
    await job(EXPORT, JobStatus.RUNNING, locked_at=T - timedelta(minutes=1))

    stats = await queue_stats(db, now=T)

    assert stats.depth == (
        DepthCount(EXPORT, JobStatus.PENDING, 1),
        DepthCount(EXPORT, JobStatus.RUNNING, 2),
        DepthCount(FETCH, JobStatus.COMPLETED, 2),
        DepthCount(FETCH, JobStatus.FAILED, 1),
        DepthCount(FETCH, JobStatus.PENDING, 3),
        DepthCount(FETCH, JobStatus.RUNNING, 3),
    )
    assert stats.pending == (
        PendingSummary(EXPORT, due=1, waiting=0, oldest_due_age=timedelta(seconds=30)),
        PendingSummary(FETCH, due=2, waiting=1, oldest_due_age=timedelta(minutes=10)),
    )
    assert [(e.job.id, e.silent_for) for e in stats.expired_leases] == [
        (stale_fetch, timedelta(minutes=6)),
        (stale_export, timedelta(minutes=3)),
    ]


async def test_stats_of_an_empty_queue(db: Database) -> None:
    stats = await queue_stats(db, now=T)
    assert (stats.depth, stats.pending, stats.expired_leases) == ((), (), ())


# -- listings ------------------------------------------------------------------------------------


async def test_run_list_aggregates_jobs_and_filters(factory: Factory, db: Database) -> None:
    portal = await factory.portal()
    old = await factory.run(portal, status=RunStatus.FAILED, created_at=T - timedelta(days=1))
    await factory.job(old, status=JobStatus.FAILED, total=10, processed=4)
    new = await factory.run(portal, status=RunStatus.RUNNING, created_at=T)
    await factory.job(new, status=JobStatus.COMPLETED, total=100, processed=100)
    await factory.job(
        new, content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING, processed=7
    )
    other = await factory.run(kind=EXPORT, created_at=T + timedelta(hours=1))

    everything = await run_list(db)
    of_portal = await run_list(db, portal_id=portal)
    failed = await run_list(db, statuses=[RunStatus.FAILED, RunStatus.STOPPED])
    exports = await run_list(db, kind=EXPORT)

    assert [o.run.id for o in everything] == [other.id, new.id, old.id]
    assert [o.run.id for o in await run_list(db, limit=1)] == [other.id]
    assert [o.run.id for o in of_portal] == [new.id, old.id]
    latest = of_portal[0]
    assert (latest.jobs, latest.jobs_completed, latest.jobs_failed) == (2, 1, 0)
    # A job without a total yet does not add to the total; its progress still counts.
    assert (latest.processed, latest.total) == (107, 100)
    assert [(o.run.id, o.jobs_failed) for o in failed] == [(old.id, 1)]
    assert [(o.run.id, o.jobs, o.processed, o.total) for o in exports] == [(other.id, 0, 0, None)]


async def test_job_list_filters_and_run_jobs(factory: Factory, db: Database) -> None:
    run = await factory.run()
    a = await factory.job(run, status=JobStatus.FAILED)
    b = await factory.job(run, content_type=ContentType.BLOG_POST, status=JobStatus.PENDING)
    export = await factory.job(await factory.run(kind=EXPORT), status=JobStatus.FAILED)

    assert [j.id for j in await job_list(db)] == [export.id, b.id, a.id]
    assert [j.id for j in await job_list(db, statuses=[JobStatus.FAILED])] == [export.id, a.id]
    assert [j.id for j in await job_list(db, kinds=[FETCH])] == [b.id, a.id]
    assert [j.id for j in await job_list(db, portal_id=export.portal_id)] == [export.id]
    assert [j.id for j in await job_list(db, run_id=run.id, limit=1)] == [b.id]
    assert [j.id for j in await run_jobs(db, run.id)] == [a.id, b.id]


# -- requeue -------------------------------------------------------------------------------------


async def test_requeue_resets_attempts_keeps_the_checkpoint_and_reopens_the_run(
    factory: Factory, db: Database
) -> None:
    run = await factory.run(
        status=RunStatus.PARTIALLY_FAILED, started_at=T - timedelta(hours=1), finished_at=T
    )
    failed = await factory.failed_job(
        run, total=1000, last_error="HubSpotRetryableError: 500", finished_at=T
    )
    done = await factory.job(run, content_type=ContentType.BLOG_POST, status=JobStatus.COMPLETED)

    result = await job_requeue(db, failed.id, now=T + timedelta(minutes=1))

    assert (result.outcome, result.previous_status) == (RequeueOutcome.REQUEUED, JobStatus.FAILED)
    job = await _job_row(db, failed.id)
    assert (job["status"], job["attempts"], job["run_after"], job["finished_at"]) == (
        "pending",
        0,
        T + timedelta(minutes=1),
        None,
    )
    assert (job["cursor"], job["processed"], job["total"]) == ("page-7", 700, 1000)
    assert (job["lease_token"], job["locked_by"]) == (None, None)
    assert (await _job_row(db, done.id))["status"] == "completed"
    reopened = await _run_row(db, run.id)
    assert (reopened["status"], reopened["finished_at"]) == ("running", None)

    # The requeued job runs again, and its run settles again when it finishes.
    later = T + timedelta(minutes=2)
    claim = Claim("w1", [FETCH])
    [claimed] = await job_claim(db, claim, now=later)
    assert (claimed.id, claimed.attempts, claimed.cursor) == (failed.id, 1, "page-7")
    assert claimed.lease_token is not None
    await job_complete(db, claimed.id, claimed.lease_token, processed=1000, now=later)
    assert (await _run_row(db, run.id))["status"] == "completed"


async def test_requeue_from_start_forgets_the_checkpoint(factory: Factory, db: Database) -> None:
    stopped = await factory.job(status=JobStatus.STOPPED, cursor="page-3", processed=300)

    result = await job_requeue(db, stopped.id, from_start=True, now=T)

    assert (result.outcome, result.previous_status) == (RequeueOutcome.REQUEUED, JobStatus.STOPPED)
    job = await _job_row(db, stopped.id)
    assert (job["status"], job["cursor"], job["processed"]) == ("pending", None, 0)


@pytest.mark.parametrize("status", [JobStatus.PENDING, JobStatus.RUNNING, JobStatus.COMPLETED])
async def test_requeue_refuses_jobs_that_are_not_finished_badly(
    factory: Factory, db: Database, status: JobStatus
) -> None:
    job = await factory.job(status=status, attempts=1)

    result = await job_requeue(db, job.id, now=T)

    assert (result.outcome, result.previous_status) == (RequeueOutcome.NOT_FINISHED, status)
    row = await _job_row(db, job.id)
    assert (row["status"], row["attempts"]) == (str(status), 1)


async def test_requeue_of_a_missing_job(db: Database) -> None:
    result = await job_requeue(db, 987_654, now=T)
    assert (result.job_id, result.outcome, result.previous_status) == (
        987_654,
        RequeueOutcome.NOT_FOUND,
        None,
    )


async def test_requeue_refuses_when_the_same_type_is_in_flight(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    old_run = await factory.run(portal, status=RunStatus.FAILED)
    failed = await factory.job(old_run, status=JobStatus.FAILED, attempts=3)
    new_run = await factory.run(portal, status=RunStatus.RUNNING)
    in_flight = await factory.job(new_run, status=JobStatus.RUNNING)

    result = await job_requeue(db, failed.id, now=T)

    assert result.outcome is RequeueOutcome.IN_FLIGHT
    assert (result.blocking_job_id, result.blocking_run_id) == (in_flight.id, new_run.id)
    row = await _job_row(db, failed.id)
    assert (row["status"], row["attempts"]) == ("failed", 3)
    assert (await _run_row(db, old_run.id))["status"] == "failed"


async def test_retry_failed_takes_the_newest_job_of_each_type(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    run1 = await factory.run(portal, status=RunStatus.FAILED)
    oldest = await factory.job(run1, status=JobStatus.FAILED)
    run2 = await factory.run(portal, status=RunStatus.FAILED)
    newer = await factory.job(run2, status=JobStatus.FAILED)
    blog = await factory.job(run2, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED)
    elsewhere = await factory.job(status=JobStatus.FAILED)

    results = await jobs_retry_failed(db, portal_id=portal, now=T)

    assert [(r.job_id, r.outcome, r.blocking_job_id) for r in results] == [
        (blog.id, RequeueOutcome.REQUEUED, None),
        (newer.id, RequeueOutcome.REQUEUED, None),
        (oldest.id, RequeueOutcome.IN_FLIGHT, newer.id),
    ]
    assert (await _job_row(db, elsewhere.id))["status"] == "failed"
    by_run = await jobs_retry_failed(db, run_id=elsewhere.run_id, now=T)
    assert [(r.job_id, r.outcome) for r in by_run] == [(elsewhere.id, RequeueOutcome.REQUEUED)]
    rest = await jobs_retry_failed(db, now=T)
    assert [(r.job_id, r.outcome) for r in rest] == [(oldest.id, RequeueOutcome.IN_FLIGHT)]


# -- prune ---------------------------------------------------------------------------------------


async def test_prune_deletes_settled_history_strictly_older_than_the_age(
    factory: Factory, db: Database
) -> None:
    now = await db_now(db)
    cutoff = now - timedelta(days=30)
    user = await factory.user()
    portal = await factory.portal(user)

    gone = await factory.run(
        portal, status=RunStatus.COMPLETED, finished_at=cutoff - timedelta(seconds=1)
    )
    await factory.job(gone, status=JobStatus.COMPLETED)
    await factory.job(gone, content_type=ContentType.BLOG_POST, status=JobStatus.COMPLETED)
    await factory.export(gone, status=JobStatus.COMPLETED)
    await factory.notification(user, gone)
    # Stopped by hand without a finish time: its creation time counts.
    stopped = await factory.run(
        portal, status=RunStatus.STOPPED, created_at=now - timedelta(days=40)
    )
    await factory.job(stopped, status=JobStatus.STOPPED)

    at_cutoff = await factory.run(portal, status=RunStatus.FAILED, finished_at=cutoff)
    await factory.job(at_cutoff, status=JobStatus.FAILED)
    await factory.notification(user, at_cutoff)
    still_open = await factory.run(
        portal, status=RunStatus.RUNNING, created_at=now - timedelta(days=90)
    )
    await factory.job(still_open, status=JobStatus.COMPLETED)
    [old_note] = await query(
        db.pool,
        "opsplant_notification",
        user_id=user,
        run_id=None,
        created_at=cutoff - timedelta(seconds=1),
    )
    [new_note] = await query(
        db.pool, "opsplant_notification", user_id=user, run_id=None, created_at=cutoff
    )
    before = await query(db, "opscheck_ids")

    dry = await runs_prune(db, timedelta(days=30), dry_run=True, now=now)
    assert await query(db, "opscheck_ids") == before

    done = await runs_prune(db, timedelta(days=30), now=now)

    went = ExportFile(portal, gone.id, ContentType.SITE_PAGE, ExportFormat.CSV)
    assert (
        dry == done == PruneCounts(runs=2, jobs=3, exports=1, notifications=2, export_files=(went,))
    )
    left = await query(db, "opscheck_ids")
    assert {r["id"] for r in left if r["what"] == "run"} == {at_cutoff.id, still_open.id}
    assert len([r for r in left if r["what"] == "job"]) == 2
    assert [r for r in left if r["what"] == "export"] == []
    notes = {r["id"] for r in left if r["what"] == "notification"}
    assert new_note["id"] in notes and old_note["id"] not in notes and len(notes) == 2
    assert await runs_prune(db, timedelta(days=30), now=now) == PruneCounts(0, 0, 0, 0)


async def test_prune_refuses_an_age_that_is_not_positive(db: Database) -> None:
    with pytest.raises(DatabaseError, match="must be positive"):
        await runs_prune(db, timedelta(0), now=T)
