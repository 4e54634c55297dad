"""On-call commands that look: `smuves runs / run / jobs / stats` (and `admin`, in its own
module, for those that repair), with what they share: `with_database`, the checks of a
portal or run given, `--json` and `--limit`.

They run as the database login role and see every tenant. Listing commands take `--json`
for scripts (shapes in `ops_output`). A bad id or filter is refused with a message on stderr
and exit code 2; the SQL behind each command is in smuves_sync/db/queries/ (runs.sql,
jobs.sql, stats.sql).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import click

from smuves_sync.cli import ops_output as out
from smuves_sync.cli import workers_output
from smuves_sync.cli.common import ID, run_async
from smuves_sync.cli.session import load_settings, login_database
from smuves_sync.db import Database
from smuves_sync.db.fetch_reads import FetchRead, fetch_reads_of_run
from smuves_sync.db.jobs import (
    job_list,
)
from smuves_sync.db.portals import portal_get
from smuves_sync.db.rejects import RunRejects, run_rejects
from smuves_sync.db.runs import (
    RunOverview,
    run_get,
    run_jobs,
    run_list,
)
from smuves_sync.db.stats import QueueStats, queue_stats
from smuves_sync.db.workers import WorkerRow, run_waiting_for_worker, worker_list
from smuves_sync.errors import NotFound
from smuves_sync.models import Job, JobKind, JobStatus, Run, RunStatus

T = TypeVar("T")


def with_database(work: Callable[[Database], Awaitable[T]]) -> T:
    """Run `work` against the configured database; smuves errors become exit codes."""
    settings = load_settings()

    async def main() -> T:
        async with login_database(settings) as db:
            return await work(db)

    return run_async(main())


async def require_portal(db: Database, portal_id: int | None) -> None:
    """NotFound unless `portal_id` is None or an existing portal."""
    if portal_id is not None and await portal_get(db, portal_id) is None:
        raise NotFound(f"portal {portal_id} not found")


async def get_run(db: Database, run_id: int) -> Run:
    """The run `run_id`; NotFound when there is no such run."""
    run = await run_get(db, run_id)
    if run is None:
        raise NotFound(f"run {run_id} not found (see `smuves runs`)")
    return run


async def require_run(db: Database, run_id: int | None) -> None:
    """NotFound unless `run_id` is None or an existing run."""
    if run_id is not None:
        await get_run(db, run_id)


def _choice(enum: type[JobStatus] | type[RunStatus] | type[JobKind]) -> click.Choice[str]:
    return click.Choice([str(member) for member in enum])


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
limit_option = click.option(
    "--limit", type=click.IntRange(1, 100_000), default=20, show_default=True, help="At most N."
)


# -- runs / run / jobs / stats -------------------------------------------------------------------


@click.command("runs")
@click.option("--portal", "portal_id", type=ID, help="Only this portal's runs.")
@click.option("--status", "statuses", multiple=True, type=_choice(RunStatus), help="Repeatable.")
@click.option("--kind", type=_choice(JobKind), help="fetch or export.")
@limit_option
@json_option
def runs(
    portal_id: int | None, statuses: tuple[str, ...], kind: str | None, limit: int, as_json: bool
) -> None:
    """List runs, newest first, with their jobs' progress."""

    async def work(db: Database) -> tuple[list[RunOverview], set[int]]:
        await require_portal(db, portal_id)
        found = await run_list(
            db,
            portal_id=portal_id,
            statuses=[RunStatus(s) for s in statuses] or None,
            kind=JobKind(kind) if kind else None,
            limit=limit,
        )
        return found, await run_waiting_for_worker(db, [o.run.id for o in found])

    overviews, waiting = with_database(work)
    out.echo_records(
        overviews,
        as_json,
        to_json=lambda o: out.overview_json(o, waiting=o.run.id in waiting),
        table=lambda shown: out.runs_table(shown, waiting=waiting),
        none="no runs",
    )


@click.command("run")
@click.argument("run_id", type=ID)
@json_option
def run(run_id: int, as_json: bool) -> None:
    """Show one run and each of its jobs: progress, attempts, status, last error; and the
    objects HubSpot sent that could not be stored, per type and why."""

    async def work(db: Database) -> tuple[Run, list[Job], RunRejects, list[FetchRead], bool]:
        found, jobs = await get_run(db, run_id), await run_jobs(db, run_id)
        rejects, reads = await run_rejects(db, run_id), await fetch_reads_of_run(db, run_id)
        return found, jobs, rejects, reads, bool(await run_waiting_for_worker(db, [run_id]))

    found, jobs, rejects, reads, waiting = with_database(work)
    if as_json:
        out.echo_json(
            {
                **out.run_json(found),
                "waiting_for_worker": waiting,
                "jobs": [out.job_json(j) for j in jobs],
                "rejected": out.rejects_json(rejects),
                "reads": [out.read_json(r) for r in reads],
            }
        )
        return
    console = out.console()
    console.print(out.run_header(found, waiting=waiting))
    console.print(out.jobs_table(jobs, title=f"jobs of run {run_id}", with_run=False))
    if rejects.by_type:
        console.print(out.rejects_table(rejects, run_id))
    if reads:
        console.print(out.reads_table(reads, run_id))


@click.command("jobs")
@click.option("--status", "statuses", multiple=True, type=_choice(JobStatus), help="Repeatable.")
@click.option("--kind", "kinds", multiple=True, type=_choice(JobKind), help="Repeatable.")
@click.option("--portal", "portal_id", type=ID, help="Only this portal's jobs.")
@click.option("--run", "run_id", type=ID, help="Only this run's jobs.")
@limit_option
@json_option
def jobs(
    statuses: tuple[str, ...],
    kinds: tuple[str, ...],
    portal_id: int | None,
    run_id: int | None,
    limit: int,
    as_json: bool,
) -> None:
    """List jobs, newest first."""

    async def work(db: Database) -> list[Job]:
        await require_portal(db, portal_id)
        await require_run(db, run_id)
        return await job_list(
            db,
            statuses=[JobStatus(s) for s in statuses] or None,
            kinds=[JobKind(k) for k in kinds] or None,
            portal_id=portal_id,
            run_id=run_id,
            limit=limit,
        )

    found = with_database(work)
    out.echo_records(found, as_json, to_json=out.job_json, table=out.jobs_table, none="no jobs")


@click.command("stats")
@json_option
def stats(as_json: bool) -> None:
    """Queue depth by kind and status, the oldest due job's wait, jobs past their lease, and
    the workers: alive or dead, what they work."""

    async def work(db: Database) -> tuple[QueueStats, list[WorkerRow]]:
        return await queue_stats(db), await worker_list(db)

    found, workers = with_database(work)
    if as_json:
        listed = [workers_output.worker_json(w) for w in workers]
        out.echo_json({**out.stats_json(found), "workers": listed})
        return
    console = out.console()
    for table in [*out.stats_tables(found), workers_output.workers_table(workers)]:
        console.print(table)


COMMANDS = (runs, run, jobs, stats)
