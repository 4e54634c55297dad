"""`smuves export <portal> --type T --format csv|jsonl [--out FILE]`: write a content file.

An export run and job (2-minute lease, heartbeats) are enqueued and worked here: rows are
streamed from Postgres into the file (SMUVES_EXPORT_DIR/portal-<id>/<type>-run<run>.<ext>
unless --out says otherwise), and the exports row records path, rows and bytes. CSV cells
that a spreadsheet would run as a formula are neutralised. Exit codes as for `smuves sync`.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from smuves_sync.cli.common import ID, ExitCode, run_async
from smuves_sync.cli.progress import elapsed, settled_ok, summary_table, work_run
from smuves_sync.cli.session import load_settings, login_database, worker_database
from smuves_sync.cli.sync import configure_logging
from smuves_sync.db.exports import export_of_run
from smuves_sync.models import ContentType, Export, ExportFormat
from smuves_sync.orchestrator import parse_content_types, start_export
from smuves_sync.settings import Settings


async def export_portal(
    settings: Settings,
    portal_id: int,
    content_type: str,
    export_format: ExportFormat,
    *,
    out: Path | None,
    wait: bool,
    console: Console,
) -> tuple[ExitCode, Export | None]:
    """Enqueue an export and (with `wait`) work it; the exit code and the export row."""
    (wanted,) = parse_content_types([content_type])
    async with worker_database(settings, max_size=6) as (db, conninfo):
        async with login_database(settings) as operator:  # as for `smuves sync`
            started = await start_export(
                operator,
                portal_id,
                wanted,
                export_format,
                path=out,
                max_attempts=settings.max_attempts,
            )
        run = started.run
        console.print(f"run {run.id}: exporting {wanted} of portal {portal_id} as {export_format}")
        if not wait:
            return ExitCode.OK, started.export
        snapshot = await work_run(db, conninfo, settings, run, concurrency=1, console=console)
        async with db.for_portal(portal_id) as scoped:
            export = await export_of_run(scoped, run.id, ContentType(wanted))
    if export is None or not settled_ok(snapshot):
        console.print(summary_table(snapshot, console=console))
        return ExitCode.FAILED, export
    console.print(
        f"exported {export.row_count:,} rows ({export.bytes:,} bytes) to {export.path} "
        f"in {elapsed(snapshot)}"
    )
    return ExitCode.OK, export


@click.command("export")
@click.argument("portal_id", type=ID)
@click.option("--type", "content_type", required=True, help="The content type to export.")
@click.option(
    "--format",
    "export_format",
    type=click.Choice([f.value for f in ExportFormat]),
    default=ExportFormat.CSV.value,
    show_default=True,
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The file to write (default: under SMUVES_EXPORT_DIR).",
)
@click.option("--no-wait", is_flag=True, help="Only enqueue the export; workers will write it.")
@click.pass_context
def export(
    ctx: click.Context,
    portal_id: int,
    content_type: str,
    export_format: str,
    out: Path | None,
    no_wait: bool,
) -> None:
    """Export PORTAL_ID's stored content of one type to a CSV or JSON Lines file."""
    settings = load_settings()
    console = Console()
    configure_logging(console)
    code, _ = run_async(
        export_portal(
            settings,
            portal_id,
            content_type,
            ExportFormat(export_format),
            out=out,
            wait=not no_wait,
            console=console,
        )
    )
    ctx.exit(int(code))
