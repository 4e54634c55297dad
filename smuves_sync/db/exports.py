"""The exports table: noun-verb functions over ``queries/exports.sql``.

    export = await export_create(db, run_id, portal_id, content_type, ExportFormat.CSV, path)
    export = await export_of_run(db, run_id, content_type)           # Export | None
    export = await export_record_file(db, export.id, path, rows, nbytes)

An export's status follows its job's (a trigger, migrations/0006); only the file's facts are
written here.
"""

from __future__ import annotations

from typing import Any

from smuves_sync.db.database import Database
from smuves_sync.models import ContentType, Export, ExportFormat, JobStatus


def export_from_row(row: dict[str, Any]) -> Export:
    """An ``exports`` row as an `Export`."""
    return Export(
        id=row["id"],
        run_id=row["run_id"],
        portal_id=row["portal_id"],
        content_type=ContentType(row["content_type"]),
        format=ExportFormat(row["format"]),
        status=JobStatus(row["status"]),
        path=row["path"],
        row_count=row["row_count"],
        bytes=row["bytes"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )


async def export_create(
    db: Database,
    run_id: int,
    portal_id: int,
    content_type: ContentType,
    export_format: ExportFormat,
    path: str | None = None,
) -> Export:
    """A pending export of run `run_id`; `path` None lets the worker choose the file."""
    # Same package as Database: its row helpers are ours to use.
    row = await db._one(
        "export_create",
        {
            "run_id": run_id,
            "portal_id": portal_id,
            "content_type": str(content_type),
            "format": str(export_format),
            "path": path,
        },
    )
    assert row is not None
    return export_from_row(row)


async def export_of_run(db: Database, run_id: int, content_type: ContentType) -> Export | None:
    """The export that run `run_id` makes of `content_type`."""
    row = await db._one("export_of_run", {"run_id": run_id, "content_type": str(content_type)})
    return export_from_row(row) if row else None


async def export_record_file(
    db: Database, export_id: int, path: str, row_count: int, nbytes: int
) -> Export | None:
    """Record the written file: where, how many rows, how many bytes."""
    row = await db._one(
        "export_record_file",
        {"export_id": export_id, "path": path, "row_count": row_count, "bytes": nbytes},
    )
    return export_from_row(row) if row else None
