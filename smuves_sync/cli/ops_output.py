"""How the operator commands show things: rich tables for people, plain JSON for scripts.

JSON shapes (times ISO 8601 with offset, durations in seconds, ids as numbers):

    run     {id, portal_id, owner_id, kind, status, content_types, created_at, started_at,
             finished_at}  (+ portal_name, jobs, jobs_completed, jobs_failed, processed,
             total in `runs`)
    job     {id, run_id, portal_id, kind, content_type, status, attempts, max_attempts,
             run_after, locked_at, locked_by, heartbeat_at, total, processed, cursor,
             last_error, created_at, finished_at}   (never the lease token)
    rejected  {objects, message, by_type: [{content_type, objects, reason, reasons}]}
            (`run`: the objects HubSpot sent that the run could not store)
    stats   {depth: [{kind, status, jobs}], pending: [{kind, due, waiting,
             oldest_due_age_seconds}], expired_leases: [{job…, silent_for_seconds}],
             workers: [worker]}   (worker: see `workers_output`)
    `run` and `runs` add waiting_for_worker: true when a job could be worked now and no
             live worker would claim it
    portal  {id, name, owner_id, owner_email, created_at, has_token, members,
             last_sync: {run_id, content_type, status, finished_at} | null}
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.portals import PortalSummary, TypeFetchState
from smuves_sync.db.rejects import RunRejects
from smuves_sync.db.runs import RunOverview
from smuves_sync.db.stats import QueueStats
from smuves_sync.db.workers import NO_WORKER
from smuves_sync.models import Job, JobKind, JobStatus, Run, Schedule

JSONValue = Any
T = TypeVar("T")
PIPED_WIDTH = 200


def console() -> Console:
    """A console on the current stdout (click's test runner swaps it)."""
    terminal = Console(highlight=False)
    if terminal.is_terminal or "COLUMNS" in os.environ:
        return terminal
    # Piped into a file, a pager or a cron mail: rich would assume 80 columns and cut the
    # error texts short; a wide line is the lesser evil there.
    return Console(highlight=False, width=PIPED_WIDTH)


def echo_json(value: JSONValue) -> None:
    """Print `value` as indented JSON."""
    click.echo(json.dumps(value, indent=2, default=_json_default))


def _json_default(value: object) -> JSONValue:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"cannot show {type(value).__name__} as JSON")


# -- plain values ----------------------------------------------------------------------------


def when(moment: datetime | None) -> str:
    """A time in UTC to the second, or '-'."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def duration(span: timedelta | None) -> str:
    """A span as '3d 4h', '2h 5m', '4m 10s' or '12s', or '-'."""
    if span is None:
        return "-"
    seconds = max(int(span.total_seconds()), 0)
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {seconds}s"
    return f"{seconds}s"


def progress(processed: int, total: int | None) -> str:
    """'processed/total', or just 'processed' while the total is unknown."""
    return f"{processed}/{total}" if total is not None else f"{processed}/?"


# -- records as JSON ---------------------------------------------------------------------------


def record_json(
    record: Any, *, leave_out: Collection[str] = (), rename: Mapping[str, str] | None = None
) -> dict[str, JSONValue]:
    """A record's fields as a JSON object, in field order; words (enums) print as strings,
    times and spans through `echo_json`."""
    names = rename or {}
    return {
        names.get(field.name, field.name): getattr(record, field.name)
        for field in dataclasses.fields(record)
        if field.name not in leave_out
    }


def run_json(run: Run) -> dict[str, JSONValue]:
    """A run as a JSON object."""
    return record_json(run)


def overview_json(overview: RunOverview, *, waiting: bool = False) -> dict[str, JSONValue]:
    """A run with its jobs' progress (and whether it waits for a worker) as a JSON object."""
    return {
        **run_json(overview.run),
        **record_json(overview, leave_out={"run"}),
        "waiting_for_worker": waiting,
    }


def job_json(job: Job) -> dict[str, JSONValue]:
    """A job as a JSON object, without its lease token (it fences the running worker)."""
    return record_json(job, leave_out={"lease_token"})


def rejects_json(rejects: RunRejects) -> dict[str, JSONValue]:
    """What a run could not store as a JSON object: objects, message, by_type."""
    return {
        "objects": rejects.objects,
        "message": rejects.note,
        "by_type": [record_json(count) for count in rejects.by_type],
    }


def read_json(read: FetchRead) -> dict[str, JSONValue]:
    """How a fetch job read its type, as a JSON object."""
    return record_json(read)


def stats_json(stats: QueueStats) -> dict[str, JSONValue]:
    """Queue statistics as a JSON object."""
    seconds = {"oldest_due_age": "oldest_due_age_seconds"}
    return {
        "depth": [record_json(d) for d in stats.depth],
        "pending": [record_json(p, rename=seconds) for p in stats.pending],
        "expired_leases": [
            {**job_json(e.job), "silent_for_seconds": e.silent_for} for e in stats.expired_leases
        ],
    }


def schedule_json(schedule: Schedule) -> dict[str, JSONValue]:
    """A schedule as a JSON object."""
    return record_json(schedule, rename={"cron_expression": "cron"})


@dataclasses.dataclass(frozen=True, slots=True)
class PortalListed:
    """A portal for `smuves portal list`: its summary and its last finished fetch of a type."""

    summary: PortalSummary
    last_fetch: TypeFetchState | None


def portal_json(listed: PortalListed) -> dict[str, JSONValue]:
    """A listed portal as a JSON object."""
    last = listed.last_fetch
    return {
        **record_json(listed.summary),
        "last_sync": None
        if last is None
        else {
            "run_id": last.last_run_id,
            "content_type": last.content_type,
            "status": last.last_status,
            "finished_at": last.last_finished_at,
        },
    }


def echo_records(
    records: Sequence[T],
    as_json: bool,
    *,
    to_json: Callable[[T], JSONValue],
    table: Callable[[Sequence[T]], Table],
    none: str,
) -> None:
    """Print a listing: JSON for scripts, a table for people, or `none` when it is empty."""
    if as_json:
        echo_json([to_json(record) for record in records])
    elif records:
        console().print(table(records))
    else:
        click.echo(none)


# -- tables ----------------------------------------------------------------------------------


def runs_table(
    overviews: Iterable[RunOverview], title: str = "runs", *, waiting: Collection[int] = ()
) -> Table:
    """Runs with their jobs' progress; `waiting`: the runs no live worker would work."""
    table = Table(title=title, title_justify="left")
    for header in ("run", "portal", "kind", "status", "jobs ok/failed/all", "progress"):
        table.add_column(header, no_wrap=True)
    table.add_column("types")
    table.add_column("created", no_wrap=True)
    table.add_column("finished", no_wrap=True)
    for o in overviews:
        run = o.run
        table.add_row(
            str(run.id),
            str(run.portal_id),
            str(run.kind),
            f"{run.status}, no worker" if run.id in waiting else str(run.status),
            f"{o.jobs_completed}/{o.jobs_failed}/{o.jobs}",
            progress(o.processed, o.total),
            ", ".join(str(t) for t in run.content_types),
            when(run.created_at),
            when(run.finished_at),
        )
    if waiting:
        table.caption = f"runs {', '.join(str(i) for i in sorted(waiting))}: {NO_WORKER}"
    return table


def jobs_table(jobs: Sequence[Job], title: str = "jobs", *, with_run: bool = True) -> Table:
    """Jobs: progress, attempts, status and the last error."""
    table = Table(title=title, title_justify="left")
    headers = ["job", *(["run", "portal"] if with_run else []), "kind", "type", "status"]
    for header in [*headers, "processed/total", "attempts", "worker"]:
        table.add_column(header, no_wrap=True)
    table.add_column("last error", overflow="fold")
    for job in jobs:
        where = [str(job.run_id), str(job.portal_id)] if with_run else []
        table.add_row(
            str(job.id),
            *where,
            str(job.kind),
            str(job.content_type),
            str(job.status),
            progress(job.processed, job.total),
            f"{job.attempts}/{job.max_attempts}",
            job.locked_by or "-",
            job.last_error or "",
        )
    return table


def rejects_table(rejects: RunRejects, run_id: int) -> Table:
    """Per type, the objects a run could not store and the commonest reason; the caption says
    where the objects themselves are."""
    table = Table(title=rejects.note or "", title_justify="left")
    for header in ("type", "objects", "reasons"):
        table.add_column(header, no_wrap=True)
    table.add_column("commonest reason", overflow="fold")
    for count in rejects.by_type:
        table.add_row(str(count.content_type), str(count.objects), str(count.reasons), count.reason)
    table.caption = (
        f"each object, with its bytes: SELECT hubspot_id, reason, raw FROM content_rejects "
        f"WHERE run_id = {run_id}"
    )
    return table


def reads_table(reads: Sequence[FetchRead], run_id: int) -> Table:
    """Per type, how the run's fetch read it (full or incremental, and why), what it cost, and
    how it looked for deletions (archived pass, count windows, full read: each way's requests)."""
    table = Table(title=f"reads of run {run_id}", title_justify="left")
    numbers = ("requests", "changed", "deleted", "unchanged")
    for header in ("type", "mode", *numbers):
        table.add_column(header, no_wrap=True, justify="right" if header in numbers else "left")
    table.add_column("deletions found by (requests)", no_wrap=True)
    table.add_column("why", overflow="fold")
    for read in reads:
        counts = (read.requests, read.changed, read.deleted, read.unchanged)
        table.add_row(
            str(read.content_type),
            read.mode,
            *(f"{n:,}" for n in counts),
            read.deletions_found_by,
            read.reason,
        )
    return table


def run_header(run: Run, *, waiting: bool = False) -> Table:
    """One run's facts, as a two-column grid; `waiting`: no live worker would work it."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("run", str(run.id))
    grid.add_row("portal", str(run.portal_id))
    grid.add_row("kind", str(run.kind))
    grid.add_row("status", str(run.status))
    if waiting:
        grid.add_row("", NO_WORKER)
    grid.add_row("types", ", ".join(str(t) for t in run.content_types))
    grid.add_row("owner", str(run.owner_id) if run.owner_id else "-")
    grid.add_row("created", when(run.created_at))
    grid.add_row("started", when(run.started_at))
    grid.add_row("finished", when(run.finished_at))
    return grid


def stats_tables(stats: QueueStats) -> list[Table]:
    """Depth (kind x status), pending per kind, and running jobs past their lease."""
    statuses = list(JobStatus)
    depth = Table(title="queue depth (jobs by kind and status)", title_justify="left")
    depth.add_column("kind", no_wrap=True)
    for status in statuses:
        depth.add_column(str(status), justify="right", no_wrap=True)
    counts = {(d.kind, d.status): d.jobs for d in stats.depth}
    for kind in JobKind:
        depth.add_row(str(kind), *(str(counts.get((kind, s), 0)) for s in statuses))

    pending = Table(title="pending jobs", title_justify="left")
    for header in ("kind", "due now", "waiting (backoff, parked)", "oldest due waited"):
        pending.add_column(header, no_wrap=True)
    by_kind = {p.kind: p for p in stats.pending}
    for kind in JobKind:
        p = by_kind.get(kind)
        pending.add_row(
            str(kind),
            str(p.due if p else 0),
            str(p.waiting if p else 0),
            duration(p.oldest_due_age if p else None),
        )

    expired = Table(
        title=f"running jobs past their lease: {len(stats.expired_leases)}", title_justify="left"
    )
    for header in ("job", "run", "portal", "kind", "type", "worker", "silent for", "attempts"):
        expired.add_column(header, no_wrap=True)
    for e in stats.expired_leases:
        job = e.job
        expired.add_row(
            str(job.id),
            str(job.run_id),
            str(job.portal_id),
            str(job.kind),
            str(job.content_type),
            job.locked_by or "-",
            duration(e.silent_for),
            f"{job.attempts}/{job.max_attempts}",
        )
    return [depth, pending, expired]


def portals_table(portals: Sequence[PortalListed]) -> Table:
    """Portals with their owner, members and last fetch."""
    table = Table(title="portals", title_justify="left")
    for header in ("portal", "name", "owner", "members", "last sync"):
        table.add_column(
            header, no_wrap=header != "name", justify="right" if header == "members" else "left"
        )
    for listed in portals:
        portal, last = listed.summary, listed.last_fetch
        fetched = (
            "never" if last is None else f"{when(last.last_finished_at)} (run {last.last_run_id})"
        )
        table.add_row(str(portal.id), portal.name, portal.owner_email, str(portal.members), fetched)
    return table


def schedules_table(schedules: Iterable[Schedule]) -> Table:
    """Schedules with their next and last firing."""
    table = Table(title="schedules (cron in UTC)", title_justify="left")
    for header in ("id", "portal", "cron", "enabled", "next run", "last run"):
        table.add_column(header, no_wrap=True)
    table.add_column("types")
    for s in schedules:
        table.add_row(
            str(s.id),
            str(s.portal_id),
            s.cron_expression,
            "yes" if s.enabled else "no",
            when(s.next_run_at),
            when(s.last_run_at),
            ", ".join(str(t) for t in s.content_types),
        )
    return table
