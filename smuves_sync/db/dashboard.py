"""What the operators' dashboard reads and records: functions over ``queries/dashboard.sql``.

They run as the login role, across every tenant (`smuves dashboard` is the operator's view,
not the tenant API). A page does its reads inside `dashboard_reads`: one transaction, so that
its figures are of one moment, planned with the parameters' values (see the query file).

    async with dashboard_reads(db) as tx:
        counts = await job_count_by_state(tx)                  # -> list[StateCount]
        ages = await job_oldest_due(tx)                        # -> {kind: timedelta | None}
        done = await job_completed_per_minute(tx)              # -> list[MinuteCount]
        dead = await job_dead_page(tx, portal_id=None, before_id=None, limit=50)
        runs = await run_page(tx, RunFilter(status=RunStatus.FAILED), before=None, limit=50)
        open_runs = await run_in_flight(tx, limit=10)          # -> list[RunProgress]
        notes = await notification_of_run(tx, run_id)
        portals = await portal_page(tx, after_id=None, limit=20)
        state = await portal_fetch_state(tx, [portal.id], list(ContentType))
        counts = await content_count_by_type(tx, [portal.id])
        schedules = await schedule_of_portals(tx, [portal.id])
        minutes = await hubspot_per_minute(tx)                 # -> list[HubSpotMinute]
    run = await run_operator_stop(db, run_id)                  # migrations/0010
    await hubspot_minute_record(worker_db, requests=12, rate_limited=1)
    await operator_action_record(db, actor=…, action="job_retry", target={…}, outcome={…})

The functions are grouped by the stored noun they read, in the order of the query file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from psycopg.rows import RowMaker, scalar_row, tuple_row
from psycopg.types.json import Jsonb

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job, JobKind, JobStatus, Run, RunStatus, Schedule

# Counts of the overview stop here: past it, "more than 100,000" says enough, and no count
# reads more than this many index entries.
COUNT_CAP = 100_000


@asynccontextmanager
async def dashboard_reads(db: Database) -> AsyncIterator[Database]:
    """One transaction for a page's reads, each statement planned with its values."""
    async with db.transaction() as tx:
        await tx.execute("dashboard_custom_plans")
        yield tx


# -- jobs -------------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class PortalJob:
    """A job with its portal's name."""

    job: Job
    portal_name: str


async def job_count_by_state(
    db: Database, *, cap: int = COUNT_CAP, now: datetime | None = None
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


def _dead_params(
    status: JobStatus,
    portal_id: int | None,
    run_id: int | None,
    content_type: ContentType | None,
) -> dict[str, Any]:
    if status not in (JobStatus.FAILED, JobStatus.STOPPED):
        raise ValueError(f"the dead letter holds failed or stopped jobs, not {status}")
    return {
        "status": str(status),
        "portal_id": portal_id,
        "run_id": run_id,
        "content_type": str(content_type) if content_type is not None else None,
    }


async def job_dead_page(
    db: Database,
    *,
    status: JobStatus = JobStatus.FAILED,
    portal_id: int | None = None,
    run_id: int | None = None,
    content_type: ContentType | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[PortalJob]:
    """Failed (or stopped) jobs, newest first, below job id `before_id` (None: the newest)."""
    params = _dead_params(status, portal_id, run_id, content_type)
    page = {"before_id": before_id, "limit": limit}
    return await db.all("job_dead_page", {**params, **page}, row=model_row(PortalJob))


async def job_dead_count(
    db: Database,
    *,
    status: JobStatus = JobStatus.FAILED,
    portal_id: int | None = None,
    run_id: int | None = None,
    content_type: ContentType | None = None,
    cap: int = COUNT_CAP,
) -> tuple[int, bool]:
    """How many jobs `job_dead_page` pages through: (count up to `cap`, more than `cap`)."""
    params = _dead_params(status, portal_id, run_id, content_type)
    jobs: int | None = await db.one("job_dead_count", {**params, "cap": cap}, row=scalar_row)
    assert jobs is not None  # count(*) always answers
    return min(jobs, cap), jobs > cap


async def job_get_many(db: Database, job_ids: Sequence[int]) -> list[PortalJob]:
    """The jobs among `job_ids` that exist, newest first."""
    params = {"job_ids": list(job_ids)}
    return await db.all("job_get_many", params, row=model_row(PortalJob))


# -- runs -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunFilter:
    """What the runs list shows; None: any. Dates are of creation, `created_to` excluded."""

    portal_id: int | None = None
    kind: JobKind | None = None
    status: RunStatus | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A run with its portal's name and the progress of its jobs."""

    run: Run
    portal_name: str
    jobs: int
    jobs_completed: int
    jobs_failed: int
    processed: int
    # None while no job of the run knows its total yet.
    total: int | None


@dataclass(frozen=True, slots=True)
class RunProgress:
    """A run with its portal's name and every one of its jobs."""

    run: Run
    portal_name: str
    jobs: tuple[Job, ...]


async def run_page(
    db: Database,
    filters: RunFilter,
    *,
    before: tuple[datetime, int] | None = None,
    limit: int = 50,
) -> list[RunSummary]:
    """Runs newest first matching `filters`, after the keyset `before` (created_at, id)."""
    params = {
        "portal_id": filters.portal_id,
        "kind": str(filters.kind) if filters.kind is not None else None,
        "status": str(filters.status) if filters.status is not None else None,
        "created_from": filters.created_from,
        "created_to": filters.created_to,
        "before_created": before[0] if before else None,
        "before_id": before[1] if before else None,
        "limit": limit,
    }
    return await db.all("run_page", params, row=model_row(RunSummary))


def _run_job_portal(cursor: Any) -> RowMaker[tuple[Run, Job, str]]:
    run_of = model_row(Run, "r_")(cursor)
    job_of = model_row(Job)(cursor)
    name = [column.name for column in cursor.description or ()].index("portal_name")
    return lambda values: (run_of(values), job_of(values), values[name])


async def run_in_flight(db: Database, *, limit: int = 10) -> list[RunProgress]:
    """The newest `limit` pending or running runs, newest first, with their jobs."""
    rows = await db.all("run_in_flight", {"limit": limit}, row=_run_job_portal)
    found: dict[int, tuple[Run, str, list[Job]]] = {}
    for run, job, portal_name in rows:
        found.setdefault(run.id, (run, portal_name, []))[2].append(job)
    return [RunProgress(run, name, tuple(jobs)) for run, name, jobs in found.values()]


async def run_count_in_flight(db: Database) -> int:
    """How many runs are pending or running."""
    runs: int | None = await db.one("run_count_in_flight", row=scalar_row)
    assert runs is not None  # count(*) always answers
    return runs


async def run_operator_stop(
    db: Database, run_id: int, *, now: datetime | None = None
) -> Run | None:
    """Stop run `run_id` as the operator: its open jobs end stopped; None: no such run."""
    params = {"run_id": run_id, "now": now}
    return await db.one("run_operator_stop", params, row=model_row(Run))


# -- notifications ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunNotification:
    """A notification about a run, with its recipient's email (None: the user is gone)."""

    id: int
    email: str | None
    kind: str
    message: str
    created_at: datetime
    read_at: datetime | None


async def notification_of_run(
    db: Database, run_id: int, *, limit: int = 50
) -> list[RunNotification]:
    """The run's notifications, newest first."""
    params = {"run_id": run_id, "limit": limit}
    return await db.all("notification_of_run", params, row=model_row(RunNotification))


# -- portals ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PortalSummary:
    """A portal as the operator sees it; whether a token is stored, never the token."""

    id: int
    name: str
    owner_email: str
    created_at: datetime
    has_token: bool


@dataclass(frozen=True, slots=True)
class TypeFetchState:
    """One content type of one portal: its last finished, last completed and open fetch."""

    portal_id: int
    content_type: ContentType
    last_job_id: int | None
    last_run_id: int | None
    last_status: JobStatus | None
    last_finished_at: datetime | None
    last_error: str | None
    done_job_id: int | None
    done_run_id: int | None
    done_finished_at: datetime | None
    done_processed: int | None
    open_job_id: int | None
    open_run_id: int | None
    open_status: JobStatus | None
    open_processed: int | None
    open_total: int | None


async def portal_page(
    db: Database, *, portal_id: int | None = None, after_id: int | None = None, limit: int = 20
) -> list[PortalSummary]:
    """Portals by id after `after_id` (None: from the first); `portal_id`: only that one."""
    params = {"portal_id": portal_id, "after_id": after_id, "limit": limit}
    return await db.all("portal_page", params, row=model_row(PortalSummary))


async def portal_fetch_state(
    db: Database, portal_ids: Sequence[int], content_types: Sequence[ContentType]
) -> list[TypeFetchState]:
    """Each portal's fetch state for each type, by portal and in the order of `content_types`."""
    params = {"portal_ids": list(portal_ids), "content_types": [str(t) for t in content_types]}
    return await db.all("portal_fetch_state", params, row=model_row(TypeFetchState))


# -- content ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContentCounts:
    """Stored objects of one portal and type."""

    live: int
    archived: int
    deleted: int


@dataclass(frozen=True, slots=True)
class _TypeCounts:
    portal_id: int
    content_type: ContentType
    counts: ContentCounts


async def content_count_by_type(
    db: Database, portal_ids: Sequence[int]
) -> dict[tuple[int, ContentType], ContentCounts]:
    """Stored objects by (portal, type); a pair with nothing stored is absent."""
    params = {"portal_ids": list(portal_ids)}
    rows = await db.all("content_count_by_type", params, row=model_row(_TypeCounts))
    return {(r.portal_id, r.content_type): r.counts for r in rows}


# -- schedules --------------------------------------------------------------------------------


async def schedule_of_portals(db: Database, portal_ids: Sequence[int]) -> list[Schedule]:
    """The schedules of the portals, by portal and id."""
    params = {"portal_ids": list(portal_ids)}
    return await db.all("schedule_of_portals", params, row=model_row(Schedule))


# -- stats: HubSpot requests per minute -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HubSpotMinute:
    """HubSpot requests and 429 answers in one minute, over every process."""

    minute: datetime
    requests: int
    rate_limited: int


async def hubspot_minute_record(
    db: Database, *, requests: int, rate_limited: int, now: datetime | None = None
) -> None:
    """Add one process's requests and 429s to the current minute."""
    params = {"requests": requests, "rate_limited": rate_limited, "now": now}
    await db.execute("hubspot_minute_record", params)


async def hubspot_per_minute(
    db: Database, *, minutes: int = 60, now: datetime | None = None
) -> list[HubSpotMinute]:
    """Requests and 429s in each of the last `minutes` minutes, oldest first, zeros included."""
    params = {"minutes": minutes, "now": now}
    return await db.all("hubspot_per_minute", params, row=model_row(HubSpotMinute))


# -- operator actions (the audit trail) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OperatorAction:
    """One button pressed in the dashboard: who, what, to what, with what outcome, when."""

    id: int
    at: datetime
    actor: str
    client: str | None
    session: str | None
    action: str
    target: dict[str, Any]
    outcome: dict[str, Any]


async def operator_action_record(
    db: Database,
    *,
    actor: str,
    action: str,
    target: Mapping[str, Any],
    outcome: Mapping[str, Any],
    client: str | None = None,
    session: str | None = None,
) -> OperatorAction:
    """Write one audit row (in the caller's transaction, beside the action it records)."""
    params = {"actor": actor, "client": client, "session": session, "action": action}
    documents = {"target": Jsonb(dict(target)), "outcome": Jsonb(dict(outcome))}
    found = await db.one(
        "operator_action_record", {**params, **documents}, row=model_row(OperatorAction)
    )
    assert found is not None  # INSERT … RETURNING always returns the row
    return found


async def operator_action_recent(db: Database, *, limit: int = 20) -> list[OperatorAction]:
    """The newest audit rows first."""
    return await db.all("operator_action_recent", {"limit": limit}, row=model_row(OperatorAction))
