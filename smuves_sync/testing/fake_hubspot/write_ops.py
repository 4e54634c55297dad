"""Checking and committing one object's write, as HubSpot's update endpoints do.

A PATCH (or a batch input) is sparse by top-level key: the keys sent replace the object's
values whole (a nested object or an array is never merged), the others stay. HubDB rows are
sparse by cell as well: `values` names only the columns it changes. A key the object does not
have, a read-only key (`READ_ONLY`, as WRITES.md reads the specs' descriptions) and a value of
the wrong JSON type are refused (`InputError`, a 400 or one input of a 207).
"""

from __future__ import annotations

from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.hubdb import ColumnDef
from smuves_sync.testing.fake_hubspot.portal import PortalModel
from smuves_sync.testing.fake_hubspot.query import Collection
from smuves_sync.testing.fake_hubspot.text import iso_ms
from smuves_sync.testing.fake_hubspot.writes import PageDraft, merged

# Generated or owned by other operations (A/B tests, multi-language), never by an update.
READ_ONLY = frozenset(
    {
        "id", "created", "updated", "createdAt", "updatedAt", "createdById", "updatedById",
        "createdBy", "updatedBy", "authorName", "url", "currentState", "currentlyPublished",
        "pageRedirected", "publishedAt", "archivedAt", "deletedAt", "translations",
        "categoryId", "contentTypeCategory", "abStatus", "abTestId", "mabExperimentId",
        "language", "translatedFromId", "absoluteUrl",
    }
)  # fmt: skip
ROW_KEYS = frozenset({"values", "name", "path", "childTableId", "displayIndex"})
PAGE_TYPES = (ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST)


class InputError(Exception):
    """One input HubSpot refuses: why, and the field at fault."""

    def __init__(self, message: str, field: str = "", category: str = "VALIDATION_ERROR") -> None:
        super().__init__(message)
        self.field = field
        self.category = category


def page_fields(current: dict[str, Any], body: dict[str, Any], object_id: str) -> dict[str, Any]:
    """The top-level keys a page, post, author, tag or redirect update sets."""
    fields: dict[str, Any] = {}
    for key, value in body.items():
        if key == "id":
            if str(value) != object_id:
                raise InputError(f"id {value!r} does not name the object {object_id}", key)
            continue
        if key in READ_ONLY:
            raise InputError(f"{key} is read-only", key)
        if key not in current:
            raise InputError(f"{key} is not a property of this object", key)
        if not _same_kind(current[key], value):
            raise InputError(f"{key} must be {_kind(current[key])}", key)
        fields[key] = value
    return fields


def row_fields(body: dict[str, Any], columns: tuple[ColumnDef, ...]) -> dict[str, Any]:
    """The keys (cells as `values.<column>`) a HubDB row update sets in the table's draft."""
    by_name = {column.name: column for column in columns}
    fields: dict[str, Any] = {}
    for key, value in body.items():
        if key == "id":
            continue  # the batch input's selector, checked by the caller
        if key not in ROW_KEYS:
            raise InputError(f"{key} is {'read-only' if key in READ_ONLY else 'unknown'}", key)
        if key == "values":
            if not isinstance(value, dict):
                raise InputError("values must be an object keyed by column name", key)
            for name, cell in value.items():
                column = by_name.get(name)
                if column is None:
                    raise InputError(f"the table has no column {name!r}", f"values.{name}")
                fields[f"values.{name}"] = _cell(column, cell)
        elif key == "displayIndex":
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError("displayIndex must be an integer", key)
        elif key == "childTableId":
            if not isinstance(value, int | str) or isinstance(value, bool):
                raise InputError("childTableId must be an integer", key)
            fields[key] = str(value)
        elif not isinstance(value, str):
            raise InputError(f"{key} must be a string", key)
        else:
            fields[key] = value
    return fields


def _cell(column: ColumnDef, value: Any) -> Any:
    if value is None:
        return None
    kind = column.type
    ok: bool
    if kind in ("TEXT", "RICHTEXT", "URL"):
        ok = isinstance(value, str)
    elif kind in ("NUMBER", "DATE"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind == "BOOLEAN":
        ok = isinstance(value, bool)
    elif kind == "SELECT":
        return _option(column, value)
    else:
        if not isinstance(value, list):
            raise InputError(f"{column.name} takes a list of options", f"values.{column.name}")
        return [_option(column, item) for item in value]
    if not ok:
        raise InputError(f"{column.name} is a {kind} column", f"values.{column.name}")
    return value


def _option(column: ColumnDef, value: Any) -> dict[str, Any]:
    """A select option named by its name, label or id (or an option object as read)."""
    wanted = value.get("name", value.get("id")) if isinstance(value, dict) else value
    for index, label in enumerate(column.options):
        if wanted in (label, str(index + 1), index + 1):
            return {
                "id": str(index + 1),
                "name": label,
                "label": label,
                "type": "option",
                "order": index,
            }
    raise InputError(f"{value!r} is not an option of {column.name}", f"values.{column.name}")


def _same_kind(old: Any, new: Any) -> bool:
    if old is None:
        return True
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool)
    if isinstance(old, int | float):
        return isinstance(new, int | float)
    return isinstance(new, type(old))


def _kind(value: Any) -> str:
    names = {bool: "a boolean", str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), "a number")


class Writer:
    """Commits writes to one portal, dating each by the fake's clock."""

    def __init__(self, portal: PortalModel) -> None:
        self.portal = portal
        self._last_ms = 0

    @property
    def last_ms(self) -> int:
        """When the latest write was dated."""
        return self._last_ms

    def now_ms(self, floor_ms: int = 0) -> int:
        """The fake's clock (the synthetic timeline's end when it has none), strictly later
        than the previous write and than `floor_ms`."""
        portal = self.portal
        clock = (
            portal.clock_ms()
            if portal.clock_ms is not None
            else portal.timeline.end(portal.version)
        )
        self._last_ms = max(clock, self._last_ms + 1, floor_ms + 1)
        return self._last_ms

    def live(
        self,
        content_type: ContentType,
        found: tuple[Collection, int],
        fields: dict[str, Any],
        user: dict[str, str],
    ) -> dict[str, Any]:
        """Commit `fields` over the live object; returns it as served now."""
        collection, slot = found
        builder, life = collection.builder, collection.life
        versioned = content_type in PAGE_TYPES
        # The version a first write replaces is recorded with it.
        first = versioned and slot not in builder.overlay.revisions
        before = builder.as_dict(life, slot) if first else None
        at = self.now_ms(builder.updated_ms(life, slot))
        builder.overlay.write(life, slot, fields, at)
        after = builder.as_dict(life, slot)
        if versioned:
            builder.overlay.record_revision(slot, before, after, at, user)
        return after

    def draft(self, found: tuple[Collection, int], fields: dict[str, Any]) -> dict[str, Any]:
        """Commit `fields` to a page's or post's draft buffer (seeded from live)."""
        collection, slot = found
        builder, life = collection.builder, collection.life
        overlay = builder.overlay
        buffer = overlay.drafts.get(slot)
        base = buffer.obj if buffer is not None else builder.as_dict(life, slot)
        floor = buffer.updated_ms if buffer is not None else builder.updated_ms(life, slot)
        at = self.now_ms(floor)
        obj = merged(base, fields)
        for key in ("updated", "updatedAt"):
            if key in obj:
                obj[key] = iso_ms(at)
        overlay.drafts[slot] = PageDraft(obj, at)
        return obj

    def push_live(
        self, content_type: ContentType, found: tuple[Collection, int], user: dict[str, str]
    ) -> None:
        """Copy the draft buffer's writable values to live and drop the buffer (no buffer:
        nothing to push, as a draft equal to live)."""
        collection, slot = found
        buffer = collection.builder.overlay.drafts.pop(slot, None)
        if buffer is None:
            return
        live = collection.builder.as_dict(collection.life, slot)
        changes = {
            key: value
            for key, value in buffer.obj.items()
            if key not in READ_ONLY and live.get(key) != value
        }
        if changes:
            self.live(content_type, found, changes, user)

    def row_draft(self, found: tuple[Collection, int], fields: dict[str, Any]) -> dict[str, Any]:
        """Commit `fields` to a row of its table's draft; returns the draft row."""
        collection, slot = found
        builder, life = collection.builder, collection.life
        overlay = builder.overlay
        pending = overlay.row_drafts.get(slot)
        floor = max(builder.updated_ms(life, slot), pending.updated_ms if pending else 0)
        overlay.write_row_draft(slot, fields, self.now_ms(floor))
        return overlay.draft_row(slot, builder.as_dict(life, slot))

    def publish(self, table_slot: int) -> None:
        """Copy a table's draft rows to the published table; the table's updatedAt moves."""
        rows = self.portal.collection(ContentType.HUBDB_ROW, table_slot)
        overlay = rows.builder.overlay
        for slot, edit in sorted(overlay.row_drafts.items()):
            if rows.life.exists(slot):
                # The draft row is copied: its updatedAt with it (moved on past a later step).
                at = max(edit.updated_ms, rows.builder.updated_ms(rows.life, slot) + 1)
                overlay.write(rows.life, slot, edit.fields, at)
        overlay.row_drafts.clear()
        tables = self.portal.collection(ContentType.HUBDB_TABLE)
        at = self.now_ms(tables.builder.updated_ms(tables.life, table_slot))
        tables.builder.overlay.write(tables.life, table_slot, {}, at)
