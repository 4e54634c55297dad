"""`smuves sync <portal> [--types …] [--no-wait]`: fetch a portal now, with progress bars.

Enqueue a fetch run (the orchestrator: one job per type not already in flight), then work it
in this process to the end and print a summary (with the objects HubSpot sent that could not
be stored, per type, and why: they do not fail the run). Exit codes: 0 the run completed; 1 it
partially failed, failed or did not finish here; 2 usage or configuration error;
3 ALL_DUPLICATE_JOBS (every requested type is being fetched already). With --no-wait the run
is only enqueued, for `smuves worker` processes to work.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import click
from rich.console import Console
from rich.logging import RichHandler

from smuves_sync.cli.common import ID, ExitCode, concurrency_option, run_async
from smuves_sync.cli.progress import elapsed, settled_ok, summary_table, work_run
from smuves_sync.cli.session import load_settings, token_cipher, worker_database
from smuves_sync.db.rejects import run_rejects
from smuves_sync.models import ContentType
from smuves_sync.orchestrator import parse_content_types, start_fetch
from smuves_sync.settings import Settings
from smuves_sync.workers.follow import RunSnapshot


async def sync_portal(
    settings: Settings,
    portal_id: int,
    types: Sequence[str] | None,
    *,
    wait: bool,
    concurrency: int,
    console: Console,
) -> tuple[ExitCode, RunSnapshot | None]:
    """Enqueue a fetch of `portal_id` and (with `wait`) work it to the end.

    Returns the exit code and the run's last snapshot (None with `wait` off).
    """
    wanted: tuple[ContentType, ...] | None = None if types is None else parse_content_types(types)
    async with worker_database(settings, max_size=2 * concurrency + 4) as (db, conninfo):
        started = await start_fetch(db, portal_id, wanted, max_attempts=settings.max_attempts)
        run = started.run
        console.print(
            f"run {run.id}: fetching {', '.join(str(j.content_type) for j in started.jobs)} "
            f"of portal {portal_id}"
        )
        for content_type, holder in started.skipped.items():
            console.print(f"  {content_type} skipped: run {holder} is already fetching it")
        if not wait:
            console.print("enqueued; `smuves worker` processes will work it")
            return ExitCode.OK, None
        snapshot = await work_run(
            db, conninfo, settings, run, concurrency=concurrency, console=console
        )
        async with db.for_portal(portal_id) as scoped:
            rejects = await run_rejects(scoped, run.id)
    console.print(summary_table(snapshot, rejects))
    if not snapshot.run.status.is_terminal:
        console.print(
            f"run {run.id} is not finished ({snapshot.run.status}); its remaining jobs wait for "
            f"a `smuves worker` (see `smuves run {run.id}`)"
        )
        return ExitCode.FAILED, snapshot
    console.print(f"run {run.id} {snapshot.run.status} in {elapsed(snapshot)}")
    return (ExitCode.OK if settled_ok(snapshot) else ExitCode.FAILED), snapshot


def configure_logging(console: Console, level: int = logging.WARNING) -> None:
    """Log lines printed above the progress bars."""
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
@concurrency_option(maximum=32, default=5, help="Jobs worked at once in this process.")
@click.pass_context
def sync(
    ctx: click.Context, portal_id: int, types: str | None, no_wait: bool, concurrency: int
) -> None:
    """Fetch PORTAL_ID's content now, with live progress (make sync PORTAL=<id>)."""
    settings = load_settings()
    token_cipher(settings)  # before anything is created: the run's jobs would need the key
    console = Console()
    configure_logging(console)
    words = None if types is None else types.split(",")
    code, _ = run_async(
        sync_portal(
            settings, portal_id, words, wait=not no_wait, concurrency=concurrency, console=console
        )
    )
    ctx.exit(int(code))
