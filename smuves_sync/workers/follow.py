"""Following one run: a snapshot of it and its jobs, and "has it settled?" for a runner.

    snapshot = await run_snapshot(db, portal_id, run_id)   # run + jobs, as one read
    runner = Runner(..., run_id=run_id, until=settled(db, portal_id, run_id))

Reads are scoped to the portal, so they work for the worker role too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from smuves_sync.db import Database
from smuves_sync.db.runs import run_get, run_jobs
from smuves_sync.errors import NotFound
from smuves_sync.models import Job, Run


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """A run and its jobs, read in one transaction."""

    run: Run
    jobs: tuple[Job, ...]


async def run_snapshot(db: Database, portal_id: int, run_id: int) -> RunSnapshot:
    """The run and its jobs now; `NotFound` when the run is not the portal's."""
    async with db.for_portal(portal_id) as scoped:
        run = await run_get(scoped, run_id)
        jobs = await run_jobs(scoped, run_id)
    if run is None:
        raise NotFound(f"run {run_id} of portal {portal_id} not found")
    return RunSnapshot(run, tuple(jobs))


def settled(db: Database, portal_id: int, run_id: int) -> Callable[[], Awaitable[bool]]:
    """A predicate: has the run reached a final status?"""

    async def check() -> bool:
        return (await run_snapshot(db, portal_id, run_id)).run.status.is_terminal

    return check
