"""Operator views and actions: noun-verb functions over ``queries/ops.sql``, taking a `Database`.

They back ``smuves runs / run / jobs / stats / admin …`` and run as the login role, across
every tenant (a worker or app `Database` would only see what its row-level security allows).

    await run_list(db, portal_id=None, statuses=None, kind=None, limit=20) -> list[RunOverview]
    await run_jobs(db, run_id)                                             -> list[Job]
    await job_list(db, statuses=None, kinds=None, portal_id=None, run_id=None, limit=50)
    await queue_stats(db, fetch_lease=…, export_lease=…, now=None)        -> QueueStats
    await job_requeue(db, job_id, from_start=False, now=None)             -> RequeueResult
    await jobs_retry_failed(db, portal_id=None, run_id=None, now=None)    -> list[RequeueResult]
    await history_prune(db, older_than, dry_run=False, now=None)          -> PruneCounts

The state changes are SQL functions of migrations/0007_operations.sql.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from smuves_sync.db.database import Database
from smuves_sync.db.rows import job_from_row, run_from_row
from smuves_sync.models import Job, JobKind, JobStatus, Run, RunStatus

# These functions belong to the db package and call the gateway's private row methods
# (_one, _all, _execute); nothing outside smuves_sync.db does.


@dataclass(frozen=True, slots=True)
class RunOverview:
    """A run with the progress of its jobs."""

    run: Run
    jobs: int
    jobs_completed: int
    jobs_failed: int
    processed: int
    # None while no job of the run knows its total yet.
    total: int | None


@dataclass(frozen=True, slots=True)
class DepthCount:
    kind: JobKind
    status: JobStatus
    jobs: int


@dataclass(frozen=True, slots=True)
class PendingSummary:
    """Pending jobs of one kind: due now, waiting for a later run_after, oldest due's wait."""

    kind: JobKind
    due: int
    waiting: int
    oldest_due_age: timedelta | None


@dataclass(frozen=True, slots=True)
class ExpiredLease:
    """A running job that has sent no heartbeat for longer than its lease."""

    job: Job
    silent_for: timedelta


@dataclass(frozen=True, slots=True)
class QueueStats:
    depth: tuple[DepthCount, ...]
    pending: tuple[PendingSummary, ...]
    expired_leases: tuple[ExpiredLease, ...]


class RequeueOutcome(StrEnum):
    REQUEUED = "requeued"
    NOT_FOUND = "not_found"
    # pending, running or completed: there is nothing to requeue
    NOT_FINISHED = "not_finished"
    # another job of the same portal, kind and type is pending or running
    IN_FLIGHT = "in_flight"


@dataclass(frozen=True, slots=True)
class RequeueResult:
    job_id: int
    outcome: RequeueOutcome
    previous_status: JobStatus | None
    blocking_job_id: int | None
    blocking_run_id: int | None


@dataclass(frozen=True, slots=True)
class PruneCounts:
    """Rows deleted (or, in a dry run, that would be) per table."""

    runs: int
    jobs: int
    exports: int
    notifications: int


def _words(values: Sequence[StrEnum] | None) -> list[str] | None:
    return None if values is None else [str(v) for v in values]


def _requeue_result(row: Mapping[str, Any]) -> RequeueResult:
    previous = row["previous_status"]
    return RequeueResult(
        job_id=row["job_id"],
        outcome=RequeueOutcome(row["outcome"]),
        previous_status=JobStatus(previous) if previous is not None else None,
        blocking_job_id=row["blocking_job_id"],
        blocking_run_id=row["blocking_run_id"],
    )


async def run_list(
    db: Database,
    *,
    portal_id: int | None = None,
    statuses: Sequence[RunStatus] | None = None,
    kind: JobKind | None = None,
    limit: int = 20,
) -> list[RunOverview]:
    """Runs, newest first, filtered by portal, statuses and kind, with their jobs' progress."""
    rows = await db._all(
        "ops_run_list",
        {
            "portal_id": portal_id,
            "statuses": _words(statuses),
            "kind": str(kind) if kind is not None else None,
            "limit": limit,
        },
    )
    return [
        RunOverview(
            run=run_from_row(r),
            jobs=r["jobs"],
            jobs_completed=r["jobs_completed"],
            jobs_failed=r["jobs_failed"],
            processed=r["processed"],
            total=r["total"],
        )
        for r in rows
    ]


async def run_jobs(db: Database, run_id: int) -> list[Job]:
    """Every job of run `run_id`, by id."""
    return [job_from_row(r) for r in await db._all("ops_run_jobs", {"run_id": run_id})]


async def job_list(
    db: Database,
    *,
    statuses: Sequence[JobStatus] | None = None,
    kinds: Sequence[JobKind] | None = None,
    portal_id: int | None = None,
    run_id: int | None = None,
    limit: int = 50,
) -> list[Job]:
    """Jobs, newest first, filtered by statuses, kinds, portal and run."""
    rows = await db._all(
        "ops_job_list",
        {
            "statuses": _words(statuses),
            "kinds": _words(kinds),
            "portal_id": portal_id,
            "run_id": run_id,
            "limit": limit,
        },
    )
    return [job_from_row(r) for r in rows]


async def queue_stats(
    db: Database,
    *,
    fetch_lease: timedelta,
    export_lease: timedelta,
    now: datetime | None = None,
) -> QueueStats:
    """Depth by kind and status, pending summary per kind, running jobs past their lease."""
    # One transaction: now() is the same instant for all three reads.
    async with db.transaction() as tx:
        depth = await tx._all("ops_stats_depth")
        pending = await tx._all("ops_stats_pending", {"now": now})
        expired = await tx._all(
            "ops_stats_expired_leases",
            {"fetch_lease": fetch_lease, "export_lease": export_lease, "now": now},
        )
    return QueueStats(
        depth=tuple(
            DepthCount(JobKind(r["kind"]), JobStatus(r["status"]), r["jobs"]) for r in depth
        ),
        pending=tuple(
            PendingSummary(JobKind(r["kind"]), r["due"], r["waiting"], r["oldest_due_age"])
            for r in pending
        ),
        expired_leases=tuple(ExpiredLease(job_from_row(r), r["silent_for"]) for r in expired),
    )


async def job_requeue(
    db: Database, job_id: int, *, from_start: bool = False, now: datetime | None = None
) -> RequeueResult:
    """Put a failed or stopped job back to pending (attempts reset; see `RequeueOutcome`)."""
    row = await db._one("ops_job_requeue", {"job_id": job_id, "from_start": from_start, "now": now})
    assert row is not None  # requeue_job always answers with one row
    return _requeue_result(row)


async def jobs_retry_failed(
    db: Database,
    *,
    portal_id: int | None = None,
    run_id: int | None = None,
    now: datetime | None = None,
) -> list[RequeueResult]:
    """Requeue every failed job of the portal and/or run (None: any), newest first."""
    rows = await db._all(
        "ops_jobs_retry_failed", {"portal_id": portal_id, "run_id": run_id, "now": now}
    )
    return [_requeue_result(r) for r in rows]


async def history_prune(
    db: Database, older_than: timedelta, *, dry_run: bool = False, now: datetime | None = None
) -> PruneCounts:
    """Delete settled runs (with jobs, exports, notifications) and notifications older than
    `older_than`; with `dry_run`, only count them."""
    row = await db._one(
        "ops_history_prune", {"older_than": older_than, "dry_run": dry_run, "now": now}
    )
    assert row is not None  # prune_history always answers with one row
    return PruneCounts(
        runs=row["runs"],
        jobs=row["jobs"],
        exports=row["exports"],
        notifications=row["notifications"],
    )
