"""Monitoring reads: the queue's figures for `smuves stats`, /metrics and the dashboard's
overview, and /healthz's migration ledger (stats.sql).

    stats = await queue_stats(db)          # login role, every tenant
    counts = await metrics_jobs(db)                 # any role: SECURITY DEFINER, counts only
    buckets = await metrics_job_durations(db, bounds)
    versions = await migration_versions(Database(pool, connect_timeout=timedelta(seconds=2)))

The overview's figures, as the login role inside `Database.custom_plans`; each reads a
bounded part of an index however many jobs have finished::

    counts = await job_count_by_state(tx, cap=100_000)   # -> list[StateCount], capped
    ages = await job_oldest_due(tx)                      # -> {kind: timedelta | None}
    done = await job_completed_per_minute(tx)            # -> list[MinuteCount], last hour
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from psycopg.rows import scalar_row, tuple_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import Job, JobKind, JobStatus


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


@dataclass(frozen=True, slots=True)
class JobCount:
    """How many jobs of a kind are in a status (and, for pending, how late the oldest is)."""

    kind: str
    status: str
    jobs: int
    oldest_pending_seconds: float | None


@dataclass(frozen=True, slots=True)
class DurationBucket:
    """Finished jobs of a kind and status whose duration falls in bucket `bucket`."""

    kind: str
    status: str
    bucket: int
    jobs: int
    seconds: float


async def queue_stats(
    db: Database,
    *,
    now: datetime | None = None,
) -> QueueStats:
    """Depth by kind and status, pending summary per kind, running jobs past their lease
    (the database's leases, `job_leases`)."""
    # One transaction: now() is the same instant for all three reads.
    async with db.transaction() as tx:
        depth = await tx.all("stats_depth", row=model_row(DepthCount))
        pending = await tx.all("stats_pending", {"now": now}, row=model_row(PendingSummary))
        expired = await tx.all("stats_expired_leases", {"now": now}, row=model_row(ExpiredLease))
    return QueueStats(depth=tuple(depth), pending=tuple(pending), expired_leases=tuple(expired))


async def metrics_jobs(db: Database, *, now: datetime | None = None) -> list[JobCount]:
    """Jobs by kind and status across every portal, with the oldest due pending job's age."""
    return await db.all("metrics_jobs", {"now": now}, row=model_row(JobCount))


async def metrics_job_durations(db: Database, bounds: Sequence[float]) -> list[DurationBucket]:
    """Finished jobs counted into the duration buckets with upper `bounds` (ascending)."""
    params = {"bounds": list(bounds)}
    return await db.all("metrics_job_durations", params, row=model_row(DurationBucket))


async def migration_versions(db: Database) -> list[int]:
    """The applied migration versions (give `db` a `connect_timeout` to bound the wait)."""
    return [int(version) for version in await db.all("migration_versions", row=scalar_row)]


# -- the dashboard's overview ----------------------------------------------------------------


class JobState(StrEnum):
    """The states the overview counts (a job's status, pending and completed split up)."""

    PENDING_DUE = "pending_due"
    PENDING_WAITING = "pending_waiting"
    RUNNING = "running"
    FAILED = "failed"
    STOPPED = "stopped"
    COMPLETED_HOUR = "completed_hour"
    COMPLETED_DAY = "completed_day"


@dataclass(frozen=True, slots=True)
class StateCount:
    """Jobs of a kind in a state; `capped`: there are more than `jobs` (the cap)."""

    kind: JobKind
    state: JobState
    jobs: int
    capped: bool


@dataclass(frozen=True, slots=True)
class MinuteCount:
    """A figure of one minute (`minute` is its start)."""

    minute: datetime
    value: int


async def job_count_by_state(
    db: Database, *, cap: int, now: datetime | None = None
) -> list[StateCount]:
    """Jobs of each kind in each `JobState`, each count stopping at `cap`."""
    params = {"kinds": [str(k) for k in JobKind], "cap": cap, "now": now}
    return await db.all("job_count_by_state", params, row=model_row(StateCount))


async def job_oldest_due(
    db: Database, *, now: datetime | None = None
) -> dict[JobKind, timedelta | None]:
    """Per kind, how long the oldest due pending job has waited (None: none is due)."""
    params = {"kinds": [str(k) for k in JobKind], "now": now}
    rows = await db.all("job_oldest_due", params, row=tuple_row)
    return {JobKind(kind): age for kind, age in rows}


async def job_completed_per_minute(
    db: Database, *, minutes: int = 60, now: datetime | None = None
) -> list[MinuteCount]:
    """Jobs completed in each of the last `minutes` minutes, oldest first, zeros included."""
    params = {"minutes": minutes, "now": now}
    return await db.all("job_completed_per_minute", params, row=model_row(MinuteCount))
