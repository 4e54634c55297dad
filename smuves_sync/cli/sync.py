"""`smuves sync <portal> [--types …] [--no-wait]`: fetch a portal now, with progress bars.

Count the types in HubSpot (as the operator: the login role may read the portal's token,
portal_token_for_operator), enqueue a fetch run whose jobs carry those totals (the
orchestrator: one job per type not already in flight), then work it in this process to the end,
the bars drawn with their totals from the first frame, and print a summary (with the objects
HubSpot sent that could not be stored, per type, and why: they do not fail the run). Counting
is bounded by ``SMUVES_COUNT_TIMEOUT_SECONDS``; a type not counted in time is counted by its
job. One `RateLimitRegistry` paces the counts and the fetches of the process. Exit codes: 0 the
run completed; 1 it partially failed, failed or did not finish here; 2 usage or configuration
error, or a portal whose token HubSpot refused (PORTAL_NEEDS_RECONNECT: nothing is started; a
refused token is asked one count, then the portal is marked until it is reconnected); 3
ALL_DUPLICATE_JOBS (every requested type is being fetched already). With --no-wait the run is
only enqueued, for `smuves worker` processes to work. Ctrl-C hands the running jobs back at
once for a worker to finish (the run stays open); a second Ctrl-C stops the run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import click
from rich.console import Console
from rich.logging import RichHandler

from smuves_sync.cli.common import ID, ExitCode, concurrency_option, run_async
from smuves_sync.cli.progress import elapsed, settled_ok, summary_table, work_run
from smuves_sync.cli.session import (
    load_settings,
    login_database,
    token_cipher,
    worker_database,
)
from smuves_sync.cli.takeover import orphaned_fetch_run, take_over_wanted
from smuves_sync.db.fetch_reads import fetch_reads_of_run
from smuves_sync.db.portals import portal_mark_token_refused
from smuves_sync.db.rejects import run_rejects
from smuves_sync.db.runs import run_operator_stop
from smuves_sync.db.workers import NO_WORKER, run_waiting_for_worker
from smuves_sync.errors import PortalNeedsReconnect
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, Job, Run
from smuves_sync.orchestrator import (
    FetchStarted,
    TotalsCounter,
    parse_content_types,
    start_fetch,
)
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.follow import RunSnapshot


async def count_as_operator(
    counter: TotalsCounter,
    settings: Settings,
    portal_id: int,
    types: Sequence[ContentType] | None,
    full: bool = False,
) -> dict[ContentType, int]:
    """The totals of the types a fetch started now would create, read with the login role's
    right to the portal's token; the connection is closed before HubSpot is asked."""
    if not counter.enabled:
        return {}
    async with login_database(settings) as operator:
        plan = await counter.plan(operator, portal_id, types, operator=True, full=full)
    try:
        return await counter.count(plan)
    except PortalNeedsReconnect:
        async with login_database(settings) as operator:
            await portal_mark_token_refused(operator, portal_id)
        raise


async def stop_as_operator(settings: Settings, run_id: int) -> None:
    """Stop the run (its open jobs end stopped) with the login role's right to any run."""
    async with login_database(settings) as operator:
        await run_operator_stop(operator, run_id)


def _with_total(job: Job) -> str:
    return str(job.content_type) if job.total is None else f"{job.content_type} ({job.total:,})"


async def _start_as_operator(
    counter: TotalsCounter,
    settings: Settings,
    portal_id: int,
    wanted: Sequence[ContentType] | None,
    *,
    full: bool,
    wait: bool,
) -> tuple[FetchStarted, bool]:
    """Count and start the fetch as the operator; whether it waits with no worker to work it
    (asked only when this process will not work it itself)."""
    # The operator counts and starts the run: the login role may read the portal's token
    # (portal_token_for_operator) and add its jobs, a worker's login may start only scheduled
    # fetches. The workers' pool, opened first, is checked before anything is created.
    totals = await count_as_operator(counter, settings, portal_id, wanted, full)
    async with login_database(settings) as operator:
        started = await start_fetch(
            operator,
            portal_id,
            wanted,
            max_attempts=settings.max_attempts,
            totals=totals,
            full=full,
        )
        # Enqueued for nobody: say so now rather than leave the run to wait unseen.
        unworked = not wait and bool(await run_waiting_for_worker(operator, [started.run.id]))
    return started, unworked


async def sync_portal(
    settings: Settings,
    portal_id: int,
    types: Sequence[str] | None,
    *,
    wait: bool,
    concurrency: int,
    console: Console,
    full: bool = False,
    take_over: bool | None = None,
    limits: RateLimitRegistry | None = None,
) -> tuple[ExitCode, RunSnapshot | None]:
    """Enqueue a fetch of `portal_id` and (with `wait`) work it to the end (`full`: every type
    read in full, not only what changed since its last fetch; `limits`: the process's HubSpot
    budgets and outage, for a caller that brings its own clock). With `wait`, a fetch run of
    the portal left with no worker is worked here instead, if `take_over` (or the person at
    the terminal) says so (`cli.takeover`).

    Returns the exit code and the run's last snapshot (None with `wait` off).
    """
    wanted: tuple[ContentType, ...] | None = None if types is None else parse_content_types(types)
    # The one of this process: counts and fetches share its budgets and its outage.
    limits = limits or RateLimitRegistry()
    counter = TotalsCounter(settings, limits, TokenCipher(settings.secret_key))
    async with worker_database(settings, max_size=2 * concurrency + 4) as (db, conninfo):

        async def work_here(run: Run) -> tuple[ExitCode, RunSnapshot]:
            snapshot = await work_run(
                db,
                conninfo,
                settings,
                run,
                concurrency=concurrency,
                console=console,
                limits=limits,
                stop_run=lambda: stop_as_operator(settings, run.id),
            )
            return await _finish(settings, snapshot, console)

        orphan = await orphaned_fetch_run(settings, portal_id) if wait else None
        if orphan is not None and take_over_wanted(console, orphan, take_over):
            console.print(f"run {orphan.id}: taking it over, working it here")
            return await work_here(orphan)
        started, unworked = await _start_as_operator(
            counter, settings, portal_id, wanted, full=full, wait=wait
        )
        run = started.run
        console.print(
            f"run {run.id}: fetching {', '.join(_with_total(j) for j in started.jobs)} "
            f"of portal {portal_id}"
        )
        for content_type, holder in started.skipped.items():
            console.print(f"  {content_type} skipped: run {holder} is already fetching it")
        if not wait:
            console.print("enqueued; `smuves worker` processes will work it")
            if unworked:
                console.print(NO_WORKER)
            return ExitCode.OK, None
        return await work_here(run)


async def _finish(
    settings: Settings, snapshot: RunSnapshot, console: Console
) -> tuple[ExitCode, RunSnapshot]:
    """Print the run's summary and how it ended; the exit code."""
    run = snapshot.run
    # As the operator: a worker's login reads rejected objects only under a job's lease.
    async with login_database(settings) as operator:
        rejects = await run_rejects(operator, run.id)
        reads = await fetch_reads_of_run(operator, run.id)
    console.print(summary_table(snapshot, rejects, reads, console=console))
    if not run.status.is_terminal:
        console.print(
            f"run {run.id} is not finished ({run.status}); its remaining jobs wait for "
            f"a `smuves worker` (see `smuves run {run.id}`)"
        )
        return ExitCode.FAILED, snapshot
    console.print(f"run {run.id} {run.status} in {elapsed(snapshot)}")
    return (ExitCode.OK if settled_ok(snapshot) else ExitCode.FAILED), snapshot


def configure_logging(console: Console, level: int = logging.WARNING) -> None:
    """Log lines printed above the progress bars (not HubSpot's outage while the bars show:
    their status line tells it)."""
    logging.basicConfig(
        level=level,
        format="%(message)s",
        handlers=[RichHandler(console=console, show_path=False)],
        force=True,
    )


@click.command("sync")
@click.argument("portal_id", type=ID)
@click.option("--types", default=None, help="Comma-separated content types (default: all of them).")
@click.option("--no-wait", is_flag=True, help="Only enqueue the run; workers will work it.")
@click.option(
    "--full", is_flag=True, help="Read every object, not only what changed since the last fetch."
)
@click.option(
    "--take-over/--no-take-over",
    default=None,
    help="Work here a fetch run of the portal left with no worker (default: ask at a terminal).",
)
@concurrency_option(maximum=32, default=5, help="Jobs worked at once in this process.")
@click.pass_context
def sync(
    ctx: click.Context,
    portal_id: int,
    types: str | None,
    no_wait: bool,
    full: bool,
    take_over: bool | None,
    concurrency: int,
) -> None:
    """Fetch PORTAL_ID's content now, with live progress (make sync PORTAL=<id>)."""
    settings = load_settings()
    token_cipher(settings)  # before anything is created: the run's jobs would need the key
    console = Console()
    configure_logging(console)
    words = None if types is None else types.split(",")
    code, _ = run_async(
        sync_portal(
            settings,
            portal_id,
            words,
            wait=not no_wait,
            concurrency=concurrency,
            console=console,
            full=full,
            take_over=take_over,
        )
    )
    ctx.exit(int(code))
