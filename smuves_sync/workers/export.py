"""The export handler: one content type of one portal, from content_items into a file.

The file goes to the export's one place, derived from its portal, run, type and format
(`smuves_sync.export_files.export_file_path`), never to a path read from a row: the worker
login may write an exports row's counts, nothing that says where a file goes.
Rows are read through a server-side cursor (a batch at a time) inside one transaction, so
the file is a consistent snapshot and the table is never held in memory. The file is written
next to its final name; the exports row (rows, bytes, deleted objects) and the job's fenced
completion are committed together, and only then is the file moved into place. A completion refused
(the run was stopped, or the lease was lost to another worker) removes the written file: no
file is published that no exports row owns. CSV cells a spreadsheet would run as a formula are
neutralised by `export_format`. An export made for editing (`exports.edit`) is written by
`export_edit` instead. The objects marked deleted (gone from HubSpot) are left out
unless the export's row says to include them (`exports.include_deleted`, set when it was
created); how many it left out, or carries, is counted when the export starts.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from smuves_sync.db import Database
from smuves_sync.db.content import content_export_counts, content_rows
from smuves_sync.db.exports import export_of_run, export_record_file
from smuves_sync.errors import NotFound
from smuves_sync.export_files import export_file_path
from smuves_sync.models import Export, ExportFormat
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.export_edit import write_edit_export
from smuves_sync.workers.export_format import ExportResult, write_export

log = logging.getLogger(__name__)


async def handle_export(ctx: JobContext) -> None:
    """Write the job's export file and record it; complete the job."""
    job = ctx.job
    portal_id, content_type = job.portal_id, job.content_type
    async with ctx.db.for_job(job) as scoped:
        export = await export_of_run(scoped, job.run_id, content_type)
        if export is None:
            raise NotFound(f"run {job.run_id} has no export of {content_type} to write")
        counts = await content_export_counts(
            scoped, portal_id, content_type, include_deleted=export.include_deleted
        )
    job = await ctx.queue().checkpoint(job, None, 0, total=counts.rows)

    path = export_file_path(ctx.settings.export_dir, export)
    partial = path.with_name(path.name + ".part")
    try:
        async with ctx.db.for_job(job) as scoped:
            if export.edit:
                result = await write_edit_export(scoped, export, partial)
            else:
                result = await _write_rows(scoped, export, partial)
        async with ctx.db.for_job(job) as scoped:
            await export_record_file(scoped, export.id, result.rows, result.bytes, counts.deleted)
            await ctx.queue(scoped).complete(job, processed=result.rows)
    except BaseException:
        # A half-written file, or a whole one whose completion was refused (the run was
        # stopped, or another worker took the job over: LeaseLost), is nobody's export.
        partial.unlink(missing_ok=True)
        raise
    # Published only now that the row owning it has committed, so no file is ever published
    # that no exports row owns.
    os.replace(partial, path)
    log.info("job %s: exported %d rows (%d bytes) to %s", job.id, result.rows, result.bytes, path)


async def _write_rows(scoped: Database, export: Export, partial: Path) -> ExportResult:
    rows = content_rows(
        scoped,
        export.portal_id,
        export.content_type,
        with_data=export.format is ExportFormat.JSONL,
        include_deleted=export.include_deleted,
    )
    return await write_export(rows, partial, export.format)
