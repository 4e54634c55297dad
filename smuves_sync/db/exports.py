"""The exports table: noun-verb functions over ``queries/exports.sql``.

    export = await export_create(db, run_id, portal_id, content_type, ExportFormat.CSV,
                                 include_deleted=False)
    export = await export_of_run(db, run_id, content_type)           # Export | None
    export = await export_record_file(db, export.id, rows, nbytes, deleted_count)
    export = await export_record_copy(db, export.id, path)           # operator's login only
    export = await export_get(db, export_id)                         # as visible, or None

An export's status follows its job's (the trigger jobs_exports_follow); only the file's facts are
written here. Where the file is is derived (`smuves_sync.export_files`), never stored: the
runtime roles may not write `path`, which records only an operator's copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Export, ExportFormat


async def export_create(
    db: Database,
    run_id: int,
    portal_id: int,
    content_type: ContentType,
    export_format: ExportFormat,
    *,
    include_deleted: bool,
    edit: bool = False,
    fields: Sequence[str] | None = None,
) -> Export:
    """A pending export of run `run_id`; `include_deleted` keeps the objects marked deleted;
    `edit` makes it an export for editing, of `fields` (None: every editable field)."""
    params = {
        "run_id": run_id,
        "portal_id": portal_id,
        "content_type": str(content_type),
        "format": str(export_format),
        "include_deleted": include_deleted,
        "edit": edit,
        "fields": None if fields is None else list(fields),
    }
    return await db.only("export_create", params, row=model_row(Export))


async def export_get(db: Database, export_id: int) -> Export | None:
    """The export, or None when absent or not visible."""
    return await db.one("export_get", {"export_id": export_id}, row=model_row(Export))


async def export_of_run(db: Database, run_id: int, content_type: ContentType) -> Export | None:
    """The export that run `run_id` makes of `content_type`."""
    params = {"run_id": run_id, "content_type": str(content_type)}
    return await db.one("export_of_run", params, row=model_row(Export))


async def export_record_file(
    db: Database, export_id: int, row_count: int, nbytes: int, deleted_count: int
) -> Export | None:
    """Record the written file: how many rows, how many bytes, how many deleted objects it
    left out (or, when it includes them, carries)."""
    params = {
        "export_id": export_id,
        "row_count": row_count,
        "bytes": nbytes,
        "deleted_count": deleted_count,
    }
    return await db.one("export_record_file", params, row=model_row(Export))


async def export_record_copy(db: Database, export_id: int, path: str) -> Export | None:
    """Record where an operator's `smuves export --out` copied the file (operator's login)."""
    params = {"export_id": export_id, "path": path}
    return await db.one("export_record_copy", params, row=model_row(Export))
