"""Working and following one run: its jobs, and a claim limited to it (claim_jobs, 0004).

    jobs = await run_jobs(db, run_id)                       # every job of the run, by id
    claimed = await run_jobs_claim(db, worker, run_id, limit=2,
                                   fetch_lease=..., export_lease=...)

`smuves sync` works its own run in-process with the second, so it never takes other work.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from smuves_sync.db.database import Database
from smuves_sync.db.rows import job_from_row
from smuves_sync.models import Job


async def run_jobs(db: Database, run_id: int) -> list[Job]:
    """The jobs of run `run_id` (as visible to the caller), in id order."""
    # Same package as Database: its row helpers are ours to use.
    return [job_from_row(r) for r in await db._all("run_jobs_progress", {"run_id": run_id})]


async def run_jobs_claim(
    db: Database,
    worker: str,
    run_id: int,
    *,
    limit: int,
    fetch_lease: timedelta,
    export_lease: timedelta,
    now: datetime | None = None,
) -> list[Job]:
    """Claim up to `limit` due (or lease-expired) jobs of run `run_id` only."""
    rows = await db._all(
        "run_jobs_claim",
        {
            "worker": worker,
            "run_id": run_id,
            "limit": limit,
            "fetch_lease": fetch_lease,
            "export_lease": export_lease,
            "now": now,
        },
    )
    return sorted((job_from_row(r) for r in rows), key=lambda j: j.id)
