"""Working one run in-process with live progress bars, then a summary table.

    snapshot = await work_run(db, conninfo, settings, run, concurrency=5, console=console)

A `Runner` limited to the run works its jobs (other workers may help; progress comes from
the database, so their work shows too). One bar per content type shows processed / total;
a fetch's jobs usually carry their totals from the start (counted as the run was started),
else the total appears as soon as the job has counted its type (an incremental read: what
changed, counted by its first requests to HubSpot). A job ends with its total equal to what it
processed, so every bar ends full. SIGINT or SIGTERM stops the
runner gracefully: its jobs are handed back with their cursors for a worker to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

import psycopg
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from smuves_sync.db import Database
from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.rejects import NO_REJECTS, RunRejects
from smuves_sync.hubspot import RateLimitRegistry
from smuves_sync.models import Job, JobStatus, Run, RunStatus
from smuves_sync.settings import Settings
from smuves_sync.workers.follow import RunSnapshot, run_snapshot
from smuves_sync.workers.runner import Runner

_REFRESH_SECONDS = 0.25
_STATUS_STYLE = {
    JobStatus.PENDING: "dim",
    JobStatus.RUNNING: "cyan",
    JobStatus.COMPLETED: "green",
    JobStatus.FAILED: "red",
    JobStatus.STOPPED: "yellow",
}


def _waiting_long(job: Job, settings: Settings) -> bool:
    """A pending job due much later than any retry backoff: parked (e.g. a daily limit)."""
    horizon = timedelta(seconds=2 * settings.backoff_max_seconds + settings.poll_interval_seconds)
    return job.status is JobStatus.PENDING and job.run_after > datetime.now(UTC) + horizon


def _done_or_parked(
    db: Database, settings: Settings, portal_id: int, run_id: int
) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        snapshot = await run_snapshot(db, portal_id, run_id)
        if snapshot.run.status.is_terminal:
            return True
        open_jobs = [j for j in snapshot.jobs if not j.status.is_terminal]
        return bool(open_jobs) and all(_waiting_long(j, settings) for j in open_jobs)

    return check


class _Bars:
    """One progress bar per job of the run."""

    def __init__(self, console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description:<13}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
        )
        self._tasks: dict[int, TaskID] = {}

    def show(self, snapshot: RunSnapshot) -> None:
        for job in snapshot.jobs:
            style = _STATUS_STYLE.get(job.status, "")
            status = f"[{style}]{job.status}[/]"
            if job.attempts > 1:
                status += f" (attempt {job.attempts})"
            task = self._tasks.get(job.id)
            if task is None:
                task = self.progress.add_task(str(job.content_type), total=job.total, status=status)
                self._tasks[job.id] = task
            self.progress.update(task, completed=job.processed, total=job.total, status=status)


async def work_run(
    db: Database,
    conninfo: str,
    settings: Settings,
    run: Run,
    *,
    concurrency: int,
    console: Console,
    limits: RateLimitRegistry | None = None,
) -> RunSnapshot:
    """Work `run` here until it settles (or is interrupted); its last snapshot.

    `limits`: the process's HubSpot budgets, when something else here already uses them.
    """
    portal_id, run_id = run.portal_id, run.id
    runner = Runner(
        db,
        settings,
        kinds=[run.kind],
        concurrency=concurrency,
        run_id=run_id,
        until=_done_or_parked(db, settings, portal_id, run_id),
        wakeups_conninfo=conninfo,
        limits=limits,
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, runner.request_stop)
    bars = _Bars(console)

    async def refresh() -> None:
        while True:
            # A database hiccup costs one frame; the runner itself reports lasting trouble.
            with contextlib.suppress(psycopg.Error):
                bars.show(await run_snapshot(db, portal_id, run_id))
            await asyncio.sleep(_REFRESH_SECONDS)

    try:
        with bars.progress:
            painter = asyncio.create_task(refresh())
            try:
                await runner.run()
            finally:
                painter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await painter
            snapshot = await run_snapshot(db, portal_id, run_id)
            bars.show(snapshot)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return snapshot


def summary_table(
    snapshot: RunSnapshot, rejects: RunRejects = NO_REJECTS, reads: Sequence[FetchRead] = ()
) -> Table:
    """One row per job: type, status, processed / total, objects not stored, how it read (full
    or incremental, requests made, objects changed, deleted, unchanged), attempts, last error
    (or why objects were not stored, or why it read in full); the caption says how many could
    not be stored."""
    run = snapshot.run
    table = Table(title=f"{run.kind} run {run.id} of portal {run.portal_id}: {run.status}")
    numbers = ("processed", "total", "not stored", "requests", "changed", "deleted", "unchanged")
    for column in ("type", "status", "read", *numbers, "attempts", "note"):
        table.add_column(column, justify="right" if column in numbers else "left")
    rejected = {count.content_type: count for count in rejects.by_type}
    by_job = {read.job_id: read for read in reads}
    for job in snapshot.jobs:
        count = rejected.get(job.content_type)
        read = by_job.get(job.id)
        why = read.reason if read is not None and read.mode == "full" else ""
        note = job.last_error or (count.reason if count else "") or why
        costs = (
            ("",) * 4
            if read is None
            else (
                f"{read.requests:,}",
                f"{read.changed:,}",
                f"{read.deleted:,}",
                f"{read.unchanged:,}",
            )
        )
        table.add_row(
            str(job.content_type),
            f"[{_STATUS_STYLE.get(job.status, '')}]{job.status}[/]",
            "" if read is None else read.mode,
            f"{job.processed:,}",
            "?" if job.total is None else f"{job.total:,}",
            f"{count.objects:,}" if count else "0",
            *costs,
            f"{job.attempts}/{job.max_attempts}",
            note if len(note) <= 160 else note[:157] + "...",
        )
    if rejects.note:
        table.caption = f"{rejects.note} (see `smuves run {run.id}`)"
    return table


def elapsed(snapshot: RunSnapshot) -> str:
    """How long the run took (or has taken), for the closing line."""
    run = snapshot.run
    start = run.started_at or run.created_at
    end = run.finished_at or datetime.now(UTC)
    return f"{(end - start).total_seconds():.1f}s"


def settled_ok(snapshot: RunSnapshot) -> bool:
    """True when the run completed."""
    return snapshot.run.status is RunStatus.COMPLETED
