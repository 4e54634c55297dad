"""Working one run in-process with live progress bars, then a summary table.

    snapshot = await work_run(db, conninfo, settings, run, concurrency=5, console=console)

A `Runner` limited to the run works its jobs (other workers may help; progress comes from
the database, so their work shows too). One bar per content type shows processed / total;
a fetch's jobs usually carry their totals from the start (counted as the run was started),
else the total appears as soon as the job has counted its type (an incremental read: what
changed, counted by its first requests to HubSpot). A job ends with its total equal to what it
processed, so every bar ends full.

While HubSpot is unreachable (the process's outage, `hubspot.outage`), one status line under
the bars says since when and when the next try is, updated in place; the outage's own log lines
are kept off the console meanwhile (`configure_logging`'s handler), not printed per retry.

The first SIGINT (Ctrl-C) or SIGTERM stops the runner and says so: its running jobs are handed
back at once, with their cursors, for a worker to finish (the run stays open). A second one
also stops the run (`stop_run`), once they are handed back: its open jobs end stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

from rich.console import Console, RenderableType
from rich.logging import RichHandler
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from smuves_sync.db import Database
from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.rejects import NO_REJECTS, RejectCount, RunRejects
from smuves_sync.errors import DatabaseError
from smuves_sync.hubspot.outage import HubSpotOutage
from smuves_sync.hubspot.outage import log as outage_log
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
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


class _BarsAndStatus(Progress):
    """Progress bars with one status line under them when there is something to say."""

    status_line: str | None = None

    def get_renderables(self) -> Iterable[RenderableType]:
        yield from super().get_renderables()
        if self.status_line:
            yield Text(self.status_line, style="yellow")


class _OutageShown(logging.Filter):
    """Keeps the outage's log lines off a console while its status line tells the outage."""

    def __init__(self, outage: HubSpotOutage) -> None:
        super().__init__()
        self._outage = outage

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name != outage_log.name or self._outage.status() is None


@contextlib.contextmanager
def _outage_on_status_line(console: Console, outage: HubSpotOutage) -> Iterator[None]:
    """While the bars show: the outage is the status line's, not the log lines' of `console`."""
    shown = _OutageShown(outage)
    handlers = [
        handler
        for handler in logging.getLogger().handlers
        if isinstance(handler, RichHandler) and handler.console is console
    ]
    for handler in handlers:
        handler.addFilter(shown)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(shown)


class _Bars:
    """One progress bar per job of the run, and a status line while HubSpot is unreachable."""

    def __init__(self, console: Console, outage: HubSpotOutage | None = None) -> None:
        self.outage = outage
        self.progress = _BarsAndStatus(
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
        outage = self.outage.status() if self.outage is not None else None
        self.progress.status_line = outage.line() if outage is not None else None


class _Interrupts:
    """Ctrl-C (or SIGTERM) while a run is worked here: the first hands the running jobs back
    at once, the second asks for the run to be stopped as well."""

    def __init__(self, runner: Runner, console: Console, run_id: int, can_stop: bool) -> None:
        self.runner = runner
        self.console = console
        self.run_id = run_id
        self.can_stop = can_stop
        self.count = 0

    @property
    def stop_run(self) -> bool:
        """True when the run is to be stopped once its jobs are handed back."""
        return self.can_stop and self.count >= 2

    def __call__(self) -> None:
        self.count += 1
        if self.count == 1:
            jobs = len(self.runner.active_jobs)
            again = f" (Ctrl-C again stops run {self.run_id})" if self.can_stop else ""
            self.console.print(
                f"stopping: handing back {jobs} job{'' if jobs == 1 else 's'}…{again}",
                highlight=False,
            )
            self.runner.request_stop(at_once=True)
        elif self.count == 2 and self.can_stop:
            self.console.print(f"stopping run {self.run_id}: its open jobs end stopped")


async def work_run(
    db: Database,
    conninfo: str,
    settings: Settings,
    run: Run,
    *,
    concurrency: int,
    console: Console,
    limits: RateLimitRegistry | None = None,
    stop_run: Callable[[], Awaitable[object]] | None = None,
) -> RunSnapshot:
    """Work `run` here until it settles (or is interrupted); its last snapshot.

    `limits`: the process's HubSpot budgets, when something else here already uses them.
    `stop_run`: stops the run, after a second Ctrl-C (without it, a second one does nothing).
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
    interrupts = _Interrupts(runner, console, run_id, can_stop=stop_run is not None)
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupts)
    bars = _Bars(console, runner.limits.outage)

    async def refresh() -> None:
        while True:
            # A database hiccup costs one frame; the runner itself reports lasting trouble.
            with contextlib.suppress(DatabaseError):
                bars.show(await run_snapshot(db, portal_id, run_id))
            await asyncio.sleep(_REFRESH_SECONDS)

    try:
        with bars.progress, _outage_on_status_line(console, runner.limits.outage):
            painter = asyncio.create_task(refresh())
            try:
                await runner.run()
            finally:
                painter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await painter
            if stop_run is not None and interrupts.stop_run:
                await stop_run()
            snapshot = await run_snapshot(db, portal_id, run_id)
            bars.show(snapshot)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return snapshot


# The columns of the summary, and those shown when the terminal is too narrow for all of them.
_NUMBERS = frozenset(
    ("processed", "total", "not stored", "stored", "requests", "changed", "deleted", "unchanged")
)
_WIDE = (
    "type",
    "status",
    "read",
    "processed",
    "total",
    "not stored",
    "requests",
    "changed",
    "deleted",
    "unchanged",
    "deletions found by",
    "attempts",
    "note",
)
_UNBOUNDED = 10_000
_NARROW = ("type", "status", "stored", "changed", "requests", "note")


def _summary_cells(job: Job, count: RejectCount | None, read: FetchRead | None) -> dict[str, str]:
    """Every column's cell of one job's row."""
    why = read.reason if read is not None and read.mode == "full" else ""
    note = job.last_error or (count.reason if count else "") or why
    rejected = count.objects if count else 0
    costs = {"requests": "", "changed": "", "deleted": "", "unchanged": ""}
    costs["deletions found by"] = ""
    if read is not None:
        costs = {
            "requests": f"{read.requests:,}",
            "changed": f"{read.changed:,}",
            "deleted": f"{read.deleted:,}",
            "unchanged": f"{read.unchanged:,}",
            "deletions found by": read.deletions_found_by,
        }
    return {
        "type": str(job.content_type),
        "status": f"[{_STATUS_STYLE.get(job.status, '')}]{job.status}[/]",
        "read": "" if read is None else read.mode,
        "processed": f"{job.processed:,}",
        "total": "?" if job.total is None else f"{job.total:,}",
        "not stored": f"{rejected:,}",
        "stored": f"{max(job.processed - rejected, 0):,}",
        **costs,
        "attempts": f"{job.attempts}/{job.max_attempts}",
        "note": note if len(note) <= 160 else note[:157] + "...",
    }


def _table(title: str, columns: Sequence[str], rows: Sequence[dict[str, str]]) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right" if column in _NUMBERS else "left")
    for cells in rows:
        table.add_row(*(cells[column] for column in columns))
    return table


def _fits(console: Console, table: Table) -> bool:
    """True when `console` is wide enough for every cell of `table` with no word broken."""
    # Measured on an unbounded width: rich clamps a measurement to the width it is given.
    unbounded = console.options.update_width(_UNBOUNDED)
    return Measurement.get(console, unbounded, table).minimum <= console.width


def summary_table(
    snapshot: RunSnapshot,
    rejects: RunRejects = NO_REJECTS,
    reads: Sequence[FetchRead] = (),
    *,
    console: Console | None = None,
) -> Table:
    """One row per job: type, status, processed / total, objects not stored, how it read (full
    or incremental, requests made, objects changed, deleted, unchanged, how deletions were
    looked for and each way's requests), attempts, last error
    (or why objects were not stored, or why it read in full); the caption says how many could
    not be stored. On a `console` too narrow for every column unbroken: type, status, stored,
    changed, requests and note only, and the caption says `smuves run N` shows the rest."""
    run = snapshot.run
    title = f"{run.kind} run {run.id} of portal {run.portal_id}: {run.status}"
    rejected = {count.content_type: count for count in rejects.by_type}
    by_job = {read.job_id: read for read in reads}
    rows = [
        _summary_cells(job, rejected.get(job.content_type), by_job.get(job.id))
        for job in snapshot.jobs
    ]
    table = _table(title, _WIDE, rows)
    notes = [f"{rejects.note} (see `smuves run {run.id}`)"] if rejects.note else []
    if console is not None and not _fits(console, table):
        table = _table(title, _NARROW, rows)
        notes.append(f"`smuves run {run.id}` shows the rest of the columns")
    if notes:
        table.caption = "; ".join(notes)
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
