"""Comparing a file's rows with the stored versions they name: the items of a changeset.

    items = await compare_rows(db, portal_id, changes)      # NewItem per row, in file order

Each row is compared with the stored version it names (`_version`; none: the current one):
only the cells that differ become the item's `fields`, with the base's values as `before`. A
row whose cells all equal the base is `unchanged`; a row with a bad cell (not of its field's
kind, a slug with spaces, a HubDB column its table lacks), or that names an object the portal
does not hold, one deleted in HubSpot, or a version never stored, is `invalid` with the reason;
the others are `pending`. Warnings: the stored object is newer than the row's version; a new
slug another object of the portal's type holds (or another item of the file also takes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from smuves_sync.changesets.files import ChangeRow, Changes, editable_of
from smuves_sync.content_edits import (
    CellError,
    Editable,
    check_value,
    read_cell,
    same,
    stored_value,
    table_columns,
    updated_text,
)
from smuves_sync.content_text import escape_text, replace_unstorable
from smuves_sync.db import Database
from smuves_sync.db.changesets import NewItem, StoredBase, changeset_bases, changeset_slugs_taken
from smuves_sync.db.versions import version_documents
from smuves_sync.models import ContentType

# Objects looked up per statement.
CHUNK = 1000


@dataclass(frozen=True, slots=True)
class _Base:
    """The version a row is compared with."""

    version: int | None
    updated: str | None
    document: Mapping[str, Any]


async def compare_rows(db: Database, portal_id: int, changes: Changes) -> list[NewItem]:
    """The items of `changes`' rows, each compared with its base."""
    items: list[NewItem] = []
    rows = list(changes.rows)
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        items.extend(await _compare_chunk(db, portal_id, changes.content_type, chunk))
    return await _slug_warnings(db, portal_id, changes.content_type, items)


async def _compare_chunk(
    db: Database, portal_id: int, content_type: ContentType, rows: Sequence[ChangeRow]
) -> list[NewItem]:
    editable = editable_of(content_type)
    bases = await changeset_bases(db, portal_id, content_type, [r.hubspot_id for r in rows])
    tables = await _tables(db, portal_id, content_type, rows)
    items = []
    for row in rows:
        stored = bases.get(row.hubspot_id)
        columns = tables.get(row.hubspot_id.split(":", 1)[0]) if editable.values else None
        items.append(await _item(db, portal_id, content_type, editable, row, stored, columns))
    return items


async def _tables(
    db: Database, portal_id: int, content_type: ContentType, rows: Sequence[ChangeRow]
) -> dict[str, dict[str, str]]:
    """The columns of the HubDB tables of `rows` (HubDB rows only), by table id."""
    if content_type is not ContentType.HUBDB_ROW:
        return {}
    table_ids = sorted({row.hubspot_id.split(":", 1)[0] for row in rows})
    found = await changeset_bases(db, portal_id, ContentType.HUBDB_TABLE, table_ids)
    return {table_id: table_columns(base.data) for table_id, base in found.items()}


async def _item(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    editable: Editable,
    row: ChangeRow,
    stored: StoredBase | None,
    columns: Mapping[str, str] | None,
) -> NewItem:
    def invalid(reason: str, base: _Base | None = None) -> NewItem:
        return NewItem(
            str(content_type),
            row.hubspot_id,
            "invalid",
            None if base is None else base.version,
            None if base is None else base.updated,
            reason=replace_unstorable(reason),
        )

    if row.version_error is not None:
        return invalid(row.version_error)
    if stored is None:
        return invalid(f"portal {portal_id} has no {content_type} {row.hubspot_id}")
    if stored.deleted_at is not None:
        return invalid(f"deleted in HubSpot (marked so {stored.deleted_at:%Y-%m-%d %H:%M}Z)")
    base = await _base_of(db, portal_id, content_type, row, stored)
    if base is None:
        return invalid(f"no version {row.base_version} of this object is stored")
    try:
        fields, before = _changed_cells(editable, row, base.document, columns)
    except CellError as error:
        return invalid(str(error), base)
    warnings = []
    if stored.version is not None and base.version is not None and stored.version > base.version:
        warnings.append(
            f"changed since version {base.version} (the stored object is at version "
            f"{stored.version})"
        )
    state = "pending" if fields else "unchanged"
    return NewItem(
        str(content_type),
        row.hubspot_id,
        state,
        base.version,
        base.updated,
        fields,
        before,
        warnings=warnings,
    )


async def _base_of(
    db: Database, portal_id: int, content_type: ContentType, row: ChangeRow, stored: StoredBase
) -> _Base | None:
    if row.base_version is None or row.base_version == stored.version:
        return _Base(stored.version, updated_text(stored.data), stored.data)
    found = await version_documents(db, portal_id, content_type, row.hubspot_id, [row.base_version])
    old = found.get(row.base_version)
    if old is None or not isinstance(old.document, Mapping):
        return None
    return _Base(row.base_version, updated_text(old.document), old.document)


def _changed_cells(
    editable: Editable,
    row: ChangeRow,
    document: Mapping[str, Any],
    columns: Mapping[str, str] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The cells of `row` that differ from `document` (new values, base values)."""
    fields: dict[str, Any] = {}
    before: dict[str, Any] = {}
    for name, cell in row.cells.items():
        kind = editable.kind_of(name, columns if columns is not None else {})
        if kind is None:
            if cell in ("", None):
                continue  # a column of another table of the export: not this row's
            raise CellError(f"{name}: the row's table has no such column")
        old = stored_value(document, name)
        try:
            if row.stored:
                new = cell
            elif row.text:
                new = read_cell(cell, kind, old)
            else:
                new = check_value(cell, kind)
        except CellError as error:
            raise CellError(f"{name}: {error}") from None
        if not same(kind, old, new):
            # Keys as content is stored too: a HubDB column's name may hold a NUL.
            fields[escape_text(name)], before[escape_text(name)] = new, old
    return fields, before


async def _slug_warnings(
    db: Database, portal_id: int, content_type: ContentType, items: list[NewItem]
) -> list[NewItem]:
    """`items` with a warning on each new slug another object holds or another item takes."""
    names = editable_of(content_type).slugs
    wanted = {
        item.hubspot_id: value
        for item in items
        for name in names
        if item.state == "pending" and isinstance(value := item.fields.get(name), str) and value
    }
    if not wanted:
        return items
    taken = await changeset_slugs_taken(db, portal_id, content_type, wanted)
    twice = Counter(wanted.values())
    warned: list[NewItem] = []
    for item in items:
        slug = wanted.get(item.hubspot_id)
        notes = list(item.warnings)
        if slug is not None and item.hubspot_id in taken:
            notes.append(f"slug {slug!r} is taken by {content_type} {taken[item.hubspot_id]}")
        if slug is not None and twice[slug] > 1:
            notes.append(f"slug {slug!r} is given to {twice[slug]} objects of this changeset")
        warned.append(item if notes == list(item.warnings) else _with(item, notes))
    return warned


def _with(item: NewItem, warnings: list[str]) -> NewItem:
    return NewItem(
        item.content_type,
        item.hubspot_id,
        item.state,
        item.base_version,
        item.base_updated,
        item.fields,
        item.before,
        item.reason,
        tuple(warnings),
    )
