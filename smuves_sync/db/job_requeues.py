"""The operators' requeues of failed and stopped jobs (`requeue_job`, `retry_failed_jobs` of
migrations/functions/queue.sql; queries in jobs.sql), for `smuves admin` and the dashboard.

    result = await job_requeue(db, 42, from_start=True)     # result.outcome: RequeueOutcome
    results = await jobs_retry_failed(db, portal_id=7)      # newest first, one per job
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import JobStatus


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


async def job_requeue(
    db: Database, job_id: int, *, from_start: bool = False, now: datetime | None = None
) -> RequeueResult:
    """Put a failed or stopped job back to pending (attempts reset; see `RequeueOutcome`)."""
    params = {"job_id": job_id, "from_start": from_start, "now": now}
    result = await db.one("job_requeue", params, row=model_row(RequeueResult))
    assert result is not None  # requeue_job always answers with one row
    return result


async def jobs_retry_failed(
    db: Database,
    *,
    portal_id: int | None = None,
    run_id: int | None = None,
    now: datetime | None = None,
) -> list[RequeueResult]:
    """Requeue every failed job of the portal and/or run (None: any), newest first."""
    params = {"portal_id": portal_id, "run_id": run_id, "now": now}
    return await db.all("jobs_retry_failed", params, row=model_row(RequeueResult))
