"""`smuves export <portal> --type T --format csv|jsonl [--out FILE] [--include-deleted]`:
write a content file.

An export run and job (2-minute lease, heartbeats) are enqueued and worked here: rows are
streamed from Postgres into the export's one file, SMUVES_EXPORT_DIR/portal-<id>/
<type>-run<run>.<ext> (the worker writes nowhere else), and the exports row records rows and
bytes. With --out this process, once the export has completed, copies that file to FILE
under the operator's own user and records FILE in the row's `path` with the operator's login
(no runtime login may write that column, and no worker reads it); so --out needs the wait,
and --no-wait refuses it. CSV cells that a spreadsheet would run as a formula are
neutralised. With --edit (CSV) the file is made for editing: `hubspot_id`, `_version`,
`_updated` and one column per editable field (--fields: a few of them), which
`smuves changeset import` reads back exactly. The objects marked deleted (gone from HubSpot)
are left out unless --include-deleted keeps them; the last line says how many were left out,
or included.
Exit codes as for `smuves sync`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console

from smuves_sync.cli.common import ID, ExitCode, command_error, run_async
from smuves_sync.cli.progress import elapsed, settled_ok, summary_table, work_run
from smuves_sync.cli.session import load_settings, login_database, worker_database
from smuves_sync.cli.sync import configure_logging
from smuves_sync.db.exports import export_of_run, export_record_copy
from smuves_sync.export_files import copy_export_file, export_file_path
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
    include_deleted: bool = False,
    edit: bool = False,
    fields: Sequence[str] | None = None,
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
                include_deleted=include_deleted,
                max_attempts=settings.max_attempts,
                edit=edit,
                fields=fields,
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
    written = export_file_path(settings.export_dir, export)
    if out is not None:
        try:
            written = await asyncio.to_thread(copy_export_file, written, out)
        except OSError as error:
            console.print(f"export {export.id} was written to {written} but not copied: {error}")
            return ExitCode.FAILED, export
        async with login_database(settings) as operator:
            export = await export_record_copy(operator, export.id, str(written)) or export
    console.print(
        f"exported {exported_rows(export)}, {export.bytes:,} bytes, to {written} "
        f"in {elapsed(snapshot)}"
    )
    return ExitCode.OK, export


def exported_rows(export: Export) -> str:
    """'N rows' of a written export, with the deleted objects it left out or includes."""
    rows, deleted = export.row_count or 0, export.deleted_count or 0
    if export.include_deleted:
        return f"{rows:,} rows, including {deleted:,} deleted objects"
    return f"{rows:,} rows (deleted objects left out: {deleted:,})"


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
    help="Also copy the written file here (it is written under SMUVES_EXPORT_DIR).",
)
@click.option("--no-wait", is_flag=True, help="Only enqueue the export; workers will write it.")
@click.option(
    "--include-deleted",
    is_flag=True,
    help="Keep the objects marked deleted (gone from HubSpot); left out by default.",
)
@click.option(
    "--edit",
    is_flag=True,
    help="An export for editing: id, _version, _updated and the editable fields (CSV).",
)
@click.option(
    "--fields",
    default=None,
    help="With --edit: only these editable fields, comma-separated (default: all).",
)
@click.pass_context
def export(
    ctx: click.Context,
    portal_id: int,
    content_type: str,
    export_format: str,
    out: Path | None,
    no_wait: bool,
    include_deleted: bool,
    edit: bool,
    fields: str | None,
) -> None:
    """Export PORTAL_ID's stored content of one type to a CSV or JSON Lines file."""
    if out is not None and no_wait:
        raise command_error(
            "--out needs the export to be waited for (this command copies the file there once "
            "it is written); without --no-wait, or without --out: workers write it under "
            "SMUVES_EXPORT_DIR",
            ExitCode.USAGE,
        )
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
            include_deleted=include_deleted,
            edit=edit,
            fields=None if fields is None else fields.split(","),
        )
    )
    ctx.exit(int(code))
