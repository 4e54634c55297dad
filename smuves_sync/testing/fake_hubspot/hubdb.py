"""Builders of HubDB tables (HubDbTableV3) and rows (HubDbTableRowV3), on content.py's machinery.

A table's columns are a seeded choice among a few templates; a row's values follow its
table's columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.content import (
    EDITOR,
    EPOCH_ISO,
    ROW_SPAN,
    TABLE_SPAN,
    Builder,
    id_base,
)
from smuves_sync.testing.fake_hubspot.lifecycle import DAY_MS, Lifecycle, mix64
from smuves_sync.testing.fake_hubspot.text import iso_ms, paragraphs, slugify, title, title_slug


@dataclass(frozen=True, slots=True)
class ColumnDef:
    """A HubDB column: its id, name, label, type and the options of select columns."""

    id: int
    name: str
    label: str
    type: str
    options: tuple[str, ...] = ()


_COLUMN_TEMPLATES = (
    ("title", "Title", "TEXT", ()),
    ("price", "Price", "NUMBER", ()),
    ("in_stock", "In stock", "BOOLEAN", ()),
    ("category", "Category", "SELECT", ("Hardware", "Software", "Services", "Training")),
    ("website", "Website", "URL", ()),
    ("description", "Description", "RICHTEXT", ()),
    ("launch_date", "Launch date", "DATE", ()),
    ("tags", "Tags", "MULTISELECT", ("new", "popular", "sale", "limited", "eco")),
)


def table_columns(table_salt: int) -> tuple[ColumnDef, ...]:
    """The columns of one table: always a title, then a seeded choice of the others."""
    chosen = [0] + [i for i in range(1, len(_COLUMN_TEMPLATES)) if (table_salt >> i) & 1]
    if len(chosen) < 4:
        chosen = [0, 1, 3, 5]
    return tuple(
        ColumnDef(position + 1, *_COLUMN_TEMPLATES[i]) for position, i in enumerate(chosen)
    )


def _option(column: ColumnDef, index: int) -> dict[str, Any]:
    label = column.options[index]
    return {"id": str(index + 1), "name": label, "label": label, "type": "option", "order": index}


class TableBuilder(Builder):
    """HubDB tables (HubDbTableV3); a table's rowCount and updatedAt follow its rows."""

    content_type = ContentType.HUBDB_TABLE

    def __init__(
        self,
        portal_id: int,
        rows_of: Callable[[int], Lifecycle],
        columns_of: Callable[[int], tuple[ColumnDef, ...]],
    ) -> None:
        super().__init__(
            id_base(ContentType.HUBDB_TABLE, portal_id),
            TABLE_SPAN,
            {
                "allowChildTables": False,
                "allowPublicApiAccess": False,
                "createdBy": EDITOR,
                "dynamicMetaTags": {},
                "enableChildTablePages": False,
                "isOrderedManually": False,
                "published": True,
                "updatedBy": EDITOR,
                "useForPages": False,
            },
        )
        self.rows_of = rows_of
        self.columns_of = columns_of

    @staticmethod
    def name_of(life: Lifecycle, slot: int) -> str:
        """The table's unique name (usable in place of its id in URLs)."""
        topic = title(mix64(life.salt ^ slot)).split(" to ")[1]
        return f"{slugify(topic).replace('-', '_')}_{slot}"

    def updated_ms(self, life: Lifecycle, slot: int) -> int:
        """Publishing changed rows updates the table too."""
        own = super().updated_ms(life, slot)
        step = self.rows_of(slot).last_change_step
        if not step:
            return own
        start, length = life.timeline.window(step)
        published = start + 1 + int(life.fraction(slot, 64 + step) * (length - 2))
        return max(own, published)

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, names, columns, counts, timestamps and the deleted flag of one table."""
        created = iso_ms(life.created_ms(slot))
        updated = iso_ms(self.updated_ms(life, slot))
        archived_ms = life.archived_ms(slot)
        columns = self.columns_of(slot)
        name = self.name_of(life, slot)
        return {
            "id": self.id_of(slot),
            "name": name,
            "label": name.replace("_", " ").title(),
            "columns": [_column_json(column, created) for column in columns],
            "columnCount": len(columns),
            "rowCount": len(self.rows_of(slot).live(archived=False)),
            "createdAt": created,
            "updatedAt": updated,
            "publishedAt": updated,
            "deleted": archived_ms is not None,
            "deletedAt": iso_ms(archived_ms) if archived_ms else EPOCH_ISO,
        }


def _column_json(column: ColumnDef, created: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": str(column.id),
        "name": column.name,
        "label": column.label,
        "type": column.type,
        "deleted": False,
        "description": "",
        "width": 200,
        "createdAt": created,
        "updatedAt": created,
    }
    if column.options:
        result["options"] = [
            {**_option(column, i), "createdAt": created, "updatedAt": created}
            for i in range(len(column.options))
        ]
        result["optionCount"] = len(column.options)
    return result


class RowBuilder(Builder):
    """The rows of one HubDB table (HubDbTableRowV3, values keyed by column name)."""

    content_type = ContentType.HUBDB_ROW

    def __init__(
        self, portal_id: int, table_slot: int, columns: tuple[ColumnDef, ...], host: str
    ) -> None:
        first_id = id_base(ContentType.HUBDB_ROW, portal_id, table_slot)
        super().__init__(first_id, ROW_SPAN, {})
        self.columns = columns
        self.host = host

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, timestamps, name, path and column values of one row."""
        h = mix64(life.salt ^ slot)
        edited = mix64(h ^ life.revision[slot])
        name = title(h)
        path = f"{title_slug(h)}-{slot}"
        updated = iso_ms(self.updated_ms(life, slot))
        values: dict[str, Any] = {}
        for column in self.columns:
            values[column.name] = self._value(column, name, path, h, edited)
        return {
            "id": self.id_of(slot),
            "createdAt": iso_ms(life.created_ms(slot)),
            "updatedAt": updated,
            "publishedAt": updated,
            "name": name,
            "path": path,
            "childTableId": "0",
            "values": values,
        }

    def _value(self, column: ColumnDef, name: str, path: str, h: int, edited: int) -> Any:
        kind = column.type
        if kind == "TEXT":
            return name
        if kind == "NUMBER":
            return round(5 + (edited % 99_500) / 100, 2)
        if kind == "BOOLEAN":
            return bool(edited >> 20 & 1)
        if kind == "SELECT":
            return _option(column, (h >> 12) % len(column.options))
        if kind == "MULTISELECT":
            return [
                _option(column, i) for i in range(len(column.options)) if edited >> (24 + i) & 1
            ]
        if kind == "URL":
            return f"https://{self.host}/products/{path}"
        if kind == "RICHTEXT":
            return paragraphs(edited, 1)
        # DATE: midnight UTC in milliseconds, as HubDB stores dates.
        return 1_577_836_800_000 + (h >> 30) % 2_000 * DAY_MS
