"""The exports table: noun-verb functions over ``queries/exports.sql``.

    export = await export_create(db, run_id, portal_id, content_type, ExportFormat.CSV, path)
    export = await export_of_run(db, run_id, content_type)           # Export | None
    export = await export_record_file(db, export.id, path, rows, nbytes)
    export = await export_get(db, export_id)                         # as visible, or None

An export's status follows its job's (a trigger, migrations/0006); only the file's facts are
written here.
"""

from __future__ import annotations

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Export, ExportFormat


async def export_create(
    db: Database,
    run_id: int,
    portal_id: int,
    content_type: ContentType,
    export_format: ExportFormat,
    path: str | None = None,
) -> Export:
    """A pending export of run `run_id`; `path` None lets the worker choose the file."""
    params = {"run_id": run_id, "portal_id": portal_id, "content_type": str(content_type)}
    more = {"format": str(export_format), "path": path}
    return await db.only("export_create", {**params, **more}, row=model_row(Export))


async def export_get(db: Database, export_id: int) -> Export | None:
    """The export, or None when absent or not visible."""
    return await db.one("export_get", {"export_id": export_id}, row=model_row(Export))


async def export_of_run(db: Database, run_id: int, content_type: ContentType) -> Export | None:
    """The export that run `run_id` makes of `content_type`."""
    params = {"run_id": run_id, "content_type": str(content_type)}
    return await db.one("export_of_run", params, row=model_row(Export))


async def export_record_file(
    db: Database, export_id: int, path: str, row_count: int, nbytes: int
) -> Export | None:
    """Record the written file: where, how many rows, how many bytes."""
    params = {"export_id": export_id, "path": path, "row_count": row_count, "bytes": nbytes}
    return await db.one("export_record_file", params, row=model_row(Export))
