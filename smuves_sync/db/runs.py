"""Runs: creation, reads (one, a run's jobs, an operator's list), stop, reconcile, prune (runs.sql).

    run = await run_create(db, portal_id, JobKind.FETCH, types, owner_id=user)
    run = await run_get(db, run_id)                       # None: absent or not visible
    jobs = await run_jobs(db, run_id)                     # by id
    found = await run_detail(db, run_id)                  # (run, jobs) as of one moment
    found = await run_detail(db, run_id, operator=True)   # with leases, cursors, errors
    page = await run_list(db, statuses=[RunStatus.FAILED], before=None, limit=50)
    open_runs = await run_in_flight(db, limit=10)         # -> list[RunProgress], with jobs
    settled = await run_reconcile(db)                     # the runs it changed

Operators' reads (`run_list`, `run_in_flight`, `run_count_in_flight`), `run_operator_stop`
and `runs_prune` run as the login role, across every tenant (the dashboard reads inside
`Database.custom_plans`). `run_reconcile` is the queue's SQL function
(`reconcile_stuck_runs`), which `Queue` and the runner call at start and periodically.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import RowMaker, scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.export_files import ExportFile
from smuves_sync.models import ContentType, ExportFormat, Job, JobKind, Run, RunStatus


@dataclass(frozen=True, slots=True)
class RunOverview:
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


@dataclass(frozen=True, slots=True)
class PruneCounts:
    """Rows deleted (or, in a dry run, that would be) per table, and the exports' files that
    go with them."""

    runs: int
    jobs: int
    exports: int
    notifications: int
    export_files: tuple[ExportFile, ...] = ()


@dataclass(frozen=True, slots=True)
class _PruneRow:
    runs: int
    jobs: int
    exports: int
    notifications: int
    # a JSON array of {portal_id, run_id, content_type, format}
    export_files: list[dict[str, Any]]


async def run_get(db: Database, run_id: int) -> Run | None:
    """The run `run_id`, or None when it does not exist or is not visible."""
    return await db.one("run_get", {"run_id": run_id}, row=model_row(Run))


async def run_create(
    db: Database,
    portal_id: int,
    kind: JobKind,
    content_types: Sequence[ContentType],
    *,
    owner_id: uuid.UUID | None = None,
    full_read: bool = False,
) -> Run:
    """A new pending run (`full_read`: a fetch that reads every type in full)."""
    params = {
        "portal_id": portal_id,
        "owner_id": owner_id,
        "kind": str(kind),
        "full_read": full_read,
    }
    types = [str(t) for t in content_types]
    return await db.only("run_create", {**params, "content_types": types}, row=model_row(Run))


async def run_jobs(db: Database, run_id: int) -> list[Job]:
    """Every job of run `run_id` (as visible to the caller), by id."""
    return await db.all("run_jobs", {"run_id": run_id}, row=model_row(Job))


def _run_and_job(cursor: Any) -> RowMaker[tuple[Run, Job | None, str | None]]:
    """(run, job, portal name) from a row of the run's columns prefixed r_, the job's (NULL:
    no job) and, when the query returns one, portal_name (else None)."""
    run_of = model_row(Run, "r_")(cursor)
    job_of = model_row(Job)(cursor)
    names = [column.name for column in cursor.description or ()]
    job_id = names.index("id")
    name = names.index("portal_name") if "portal_name" in names else None
    return lambda values: (
        run_of(values),
        job_of(values) if values[job_id] is not None else None,
        values[name] if name is not None else None,
    )


async def run_detail(
    db: Database, run_id: int, *, operator: bool = False
) -> tuple[Run, list[Job]] | None:
    """The run and its jobs (by id) as of one moment; None when absent or not visible. The
    jobs' leases, cursors and operators' errors only with `operator` (the login role)."""
    query = "run_detail_for_operators" if operator else "run_detail"
    rows = await db.all(query, {"run_id": run_id}, row=_run_and_job)
    if not rows:
        return None
    return rows[0][0], [job for _, job, _ in rows if job is not None]


async def run_list(
    db: Database,
    *,
    portal_id: int | None = None,
    statuses: Sequence[RunStatus] | None = None,
    kind: JobKind | None = None,
    created_from: datetime | None = None,
    created_to: datetime | None = None,
    before: tuple[datetime, int] | None = None,
    limit: int = 20,
) -> list[RunOverview]:
    """Runs, newest first, filtered by portal, statuses, kind and creation time (from
    `created_from`, before `created_to`), after the keyset `before` (created_at, id), with
    their jobs' progress."""
    words = None if statuses is None else [str(s) for s in statuses]
    params = {"portal_id": portal_id, "statuses": words, "kind": str(kind) if kind else None}
    created = {"created_from": created_from, "created_to": created_to}
    keyset = {
        "before_created": before[0] if before else None,
        "before_id": before[1] if before else None,
    }
    return await db.all(
        "run_list", {**params, **created, **keyset, "limit": limit}, row=model_row(RunOverview)
    )


async def run_in_flight(db: Database, *, limit: int = 10) -> list[RunProgress]:
    """The newest `limit` pending or running runs, newest first, with their jobs."""
    rows = await db.all("run_in_flight", {"limit": limit}, row=_run_and_job)
    found: dict[int, tuple[Run, str, list[Job]]] = {}
    for run, job, portal_name in rows:
        jobs = found.setdefault(run.id, (run, portal_name or "", []))[2]
        if job is not None:
            jobs.append(job)
    return [RunProgress(run, name, tuple(jobs)) for run, name, jobs in found.values()]


async def run_count_in_flight(db: Database) -> int:
    """How many runs are pending or running."""
    runs: int = await db.only("run_count_in_flight", row=scalar_row)
    return runs


async def run_stop(db: Database, run_id: int, *, now: datetime | None = None) -> Run | None:
    """Stop the run's open jobs and settle it; None when the run is not visible."""
    return await db.one("run_stop", {"run_id": run_id, "now": now}, row=model_row(Run))


async def run_operator_stop(
    db: Database, run_id: int, *, now: datetime | None = None
) -> Run | None:
    """Stop run `run_id` as the operator (any run, no membership needed): its open jobs end
    stopped and it settles; None: no such run."""
    params = {"run_id": run_id, "now": now}
    return await db.one("run_operator_stop", params, row=model_row(Run))


async def run_reconcile(db: Database, *, now: datetime | None = None) -> list[Run]:
    """Settle runs whose jobs are all finished; returns the runs it changed."""
    return await db.all("run_reconcile", {"now": now}, row=model_row(Run))


async def runs_prune(
    db: Database, older_than: timedelta, *, dry_run: bool = False, now: datetime | None = None
) -> PruneCounts:
    """Delete settled runs (with jobs, exports, notifications) and notifications older than
    `older_than`; with `dry_run`, only count them. The exports' files are the caller's to
    remove once this has committed (`export_files.remove_export_files`)."""
    params = {"older_than": older_than, "dry_run": dry_run, "now": now}
    found = await db.only("runs_prune", params, row=model_row(_PruneRow))
    files = tuple(
        ExportFile(
            portal_id=f["portal_id"],
            run_id=f["run_id"],
            content_type=ContentType(f["content_type"]),
            format=ExportFormat(f["format"]),
        )
        for f in found.export_files
    )
    return PruneCounts(found.runs, found.jobs, found.exports, found.notifications, files)
