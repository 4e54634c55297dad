"""The export made for editing: a CSV of each object's id, stored version, HubSpot's updated
text and its editable fields, which `smuves changeset import` reads back exactly.

Columns: `hubspot_id`, `_version` (the object's current stored version, its row's
`version`), `_updated` (HubSpot's own `updated` /
`updatedAt` text of that version), then one column per field by HubSpot's name: the export's
`fields`, or every editable field of the type (`ContentTypeSpec.editable`); HubDB rows get one
`values.<column>` column per column of the portal's tables, in table and column order (a row
whose table lacks a column leaves its cell empty). Each cell is `content_edits.write_cell` of
the stored value. Rows stream as the other exports' do.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from smuves_sync.content_edits import (
    VALUES_PREFIX,
    stored_value,
    table_columns,
    updated_text,
    write_cell,
)
from smuves_sync.db import Database
from smuves_sync.db.content import content_rows
from smuves_sync.export_files import open_export_file
from smuves_sync.models import ContentType, Export
from smuves_sync.workers.export_format import ExportResult


async def edit_columns(scoped: Database, export: Export) -> tuple[str, ...]:
    """The field columns of `export`: its own, or every editable field of its type."""
    if export.fields is not None:
        return export.fields
    editable = export.content_type.spec.editable
    if editable is None:
        raise ValueError(f"{export.content_type} has no editable fields")
    columns = list(editable.fields)
    if editable.values:
        names: dict[str, None] = {}
        tables = content_rows(
            scoped,
            export.portal_id,
            ContentType.HUBDB_TABLE,
            with_data=True,
            include_deleted=False,
        )
        async for table in tables:
            names.update(dict.fromkeys(table_columns(table["data"] or {})))
        columns.extend(VALUES_PREFIX + name for name in names)
    return tuple(columns)


async def write_edit_export(scoped: Database, export: Export, path: Path) -> ExportResult:
    """Stream the export's rows into `path` as an edit CSV; the rows and bytes written."""
    columns = await edit_columns(scoped, export)
    count = 0
    with open_export_file(path) as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["hubspot_id", "_version", "_updated", *columns])
        rows = content_rows(
            scoped,
            export.portal_id,
            export.content_type,
            with_data=True,
            include_deleted=export.include_deleted,
        )
        async for row in rows:
            writer.writerow(_edit_row(row, columns))
            count += 1
    return ExportResult(rows=count, bytes=path.stat().st_size)


def _edit_row(row: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    """One object's line: its id, version, HubSpot's updated text, then its editable cells."""
    data = row["data"] or {}
    version = row["version"]
    updated = updated_text(data)
    return [
        row["hubspot_id"],
        "" if version is None else str(version),
        "" if updated is None else write_cell(updated),
        *(write_cell(stored_value(data, name)) for name in columns),
    ]
