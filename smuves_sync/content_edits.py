"""Which fields of a content type may be edited, of what kind each is, and how a cell of an
edit export holds one.

Each type's allow-list is its registry entry's `editable` (`content_types.ContentType`): an
`Editable` naming each field HubSpot writes by its HubSpot name, with its `FieldKind`, and for
HubDB rows `values.*` (every column of the row's table, by column name, its kind from the
column's type). A type without one (tables, blogs) is not editable: `editable_of` says so.

A cell of an edit export is the stored value written for a spreadsheet (`write_cell`) and read
back exactly (`read_cell`): text as the CSV export writes it (a NUL or a lone surrogate as
U+FFFD, `content_text.replace_escaped`) behind the formula guard, which here also quotes a
value that itself starts with the quote, so that removing one quote on import gives back
exactly what was exported; lists and objects as JSON (NULs as ``\\u0000``, so nothing is
lost); numbers and true/false as written by JSON. `same` says whether a read cell equals the
stored value (an empty text cell equals an empty or absent text). Values are in stored form
throughout: text escaped by `content_text` as content is stored. Like `content_types`, this
module imports nothing of the package but `content_text` and `errors`, so every layer may use
it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from smuves_sync.content_text import (
    REPLACEMENT,
    escape_text,
    escape_value,
    replace_escaped,
    unescape_json,
    unescape_text,
)
from smuves_sync.errors import InvalidInput

# The prefix of a HubDB row's cells: `values.<column name>`.
VALUES_PREFIX = "values."
# A spreadsheet runs a cell starting with one of these as a formula (the export's guard,
# workers/export_format.neutralise_cell, checks the same ones).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_INTEGER = re.compile(r"-?[0-9]+")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


class FieldKind(StrEnum):
    """What a field holds, which decides how its cell is read and checked."""

    TEXT = "text"
    SLUG = "slug"  # text without whitespace
    BOOL = "bool"
    NUMBER = "number"
    INTEGER = "integer"
    ID = "id"  # another object's id (text or number); empty: none
    IDS = "ids"  # a JSON list of ids
    JSON = "json"  # any JSON value (HubDB select, image, location cells)


# HubDB column types (HubSpot's HubDB guide) and the kind of their cells; any other type
# (SELECT, MULTISELECT, IMAGE, LOCATION, FOREIGN_ID, VIDEO, ...) is a JSON cell.
_HUBDB_KINDS = {
    "TEXT": FieldKind.TEXT,
    "RICHTEXT": FieldKind.TEXT,
    "URL": FieldKind.TEXT,
    "NUMBER": FieldKind.NUMBER,
    "CURRENCY": FieldKind.NUMBER,
    "DATE": FieldKind.NUMBER,
    "DATETIME": FieldKind.NUMBER,
    "BOOLEAN": FieldKind.BOOL,
}


class CellError(ValueError):
    """A cell that cannot be the value of its field; the message is the item's reason."""


@dataclass(frozen=True, slots=True)
class Editable:
    """A type's editable fields (HubSpot name -> kind), in export column order; `values`:
    its objects also have HubDB cells (`values.<column>`)."""

    fields: Mapping[str, FieldKind]
    values: bool = False
    # Fields whose change is checked against the slugs other objects hold.
    slugs: tuple[str, ...] = field(default=("slug",))

    def kind_of(self, name: str, columns: Mapping[str, str] | None = None) -> FieldKind | None:
        """The kind of field `name` (None: not editable); a `values.<column>` cell's from its
        table's `columns` (name -> HubDB type), JSON when they are not known."""
        if name in self.fields:
            return self.fields[name]
        if self.values and name.startswith(VALUES_PREFIX) and len(name) > len(VALUES_PREFIX):
            if columns is None:
                return FieldKind.JSON
            column_type = columns.get(name[len(VALUES_PREFIX) :])
            if column_type is None:
                return None
            return _HUBDB_KINDS.get(column_type.upper(), FieldKind.JSON)
        return None

    def allows(self, name: str) -> bool:
        """Whether a column named `name` may appear in an edit file of the type."""
        return self.kind_of(name) is not None


def export_fields(
    type_name: str, editable: Editable | None, fields: Sequence[str] | None
) -> tuple[str, ...] | None:
    """The fields an edit export of the type writes (None: all of them); `InvalidInput` for a
    type that cannot be edited or a field it does not allow."""
    if editable is None:
        raise InvalidInput(f"{type_name} cannot be edited: no export for editing of it")
    if fields is None:
        return None
    chosen = tuple(dict.fromkeys(name.strip() for name in fields if name.strip()))
    unknown = [name for name in chosen if not editable.allows(name)]
    if unknown or not chosen:
        allowed = ", ".join([*editable.fields, *(["values.<column>"] if editable.values else [])])
        named = ", ".join(map(repr, unknown)) or "none"
        raise InvalidInput(f"{type_name} has no editable field {named} (editable: {allowed})")
    return chosen


def table_columns(table: Mapping[str, Any]) -> dict[str, str]:
    """A HubDB table's columns as name -> type, from its stored document."""
    found: dict[str, str] = {}
    columns = table.get("columns")
    if isinstance(columns, list):
        for column in columns:
            if isinstance(column, Mapping) and isinstance(column.get("name"), str):
                found[unescape_text(column["name"])] = str(column.get("type") or "")
    return found


def stored_value(document: Mapping[str, Any], name: str) -> Any:
    """The stored value of field `name` (`values.<column>` inside `values`); None if absent."""
    if name.startswith(VALUES_PREFIX) and "values" in document:
        values = document.get("values")
        if isinstance(values, Mapping):
            return values.get(escape_text(name[len(VALUES_PREFIX) :]))
        return None
    return document.get(escape_text(name))


def updated_text(document: Mapping[str, Any]) -> str | None:
    """HubSpot's own text of when the object was last updated (`updated` or `updatedAt`), as
    stored."""
    for key in ("updated", "updatedAt"):
        value = document.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None


def guard_cell(text: str) -> str:
    """Quote a cell a spreadsheet would run as a formula, or one starting with the quote."""
    if text.startswith("'") or text.lstrip().startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def unguard_cell(text: str) -> str:
    """Undo `guard_cell`: a quote before a formula trigger or another quote goes."""
    rest = text[1:]
    if text.startswith("'") and (
        rest.startswith("'") or rest.lstrip().startswith(FORMULA_TRIGGERS)
    ):
        return rest
    return text


def write_cell(value: Any) -> str:
    """The cell of a stored value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return guard_cell(replace_escaped(value))
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return guard_cell(unescape_json(text))


def read_cell(cell: str, kind: FieldKind, stored: Any) -> Any:
    """The stored-form value a cell of `kind` says (`stored`: the base's value, for the
    U+FFFD rule); `CellError` when it cannot be one."""
    text = unguard_cell(cell)
    if kind in (FieldKind.TEXT, FieldKind.SLUG):
        return _read_text(text, kind, stored)
    if text.strip() == "":
        return None
    if kind is FieldKind.BOOL:
        # HubDB may hold a boolean cell as 0 or 1: it stays a number.
        flag = _read_bool(text)
        return int(flag) if type(stored) is int else flag
    if kind in (FieldKind.NUMBER, FieldKind.INTEGER):
        return _read_number(text, kind)
    if kind is FieldKind.ID:
        if not _INTEGER.fullmatch(text.strip()):
            raise CellError(f"{text!r} is not an id")
        return text.strip() if isinstance(stored, str) or stored is None else int(text)
    parsed = _read_json(text)
    if kind is FieldKind.IDS and not (
        isinstance(parsed, list) and all(_is_id(element) for element in parsed)
    ):
        raise CellError(f"{text!r} is not a JSON list of ids")
    return escape_value(parsed)


def check_value(value: Any, kind: FieldKind) -> Any:
    """A JSON value given for a field of `kind` (a JSON changeset), in stored form;
    `CellError` when it is not of the kind."""
    if value is None:
        return None
    if kind in (FieldKind.TEXT, FieldKind.SLUG):
        if not isinstance(value, str):
            raise CellError(f"expected text, got {type(value).__name__}")
        if kind is FieldKind.SLUG and any(character.isspace() for character in value):
            raise CellError(f"a slug has no spaces: {value!r}")
        return escape_text(value)
    if kind is FieldKind.BOOL and not isinstance(value, bool):
        raise CellError(f"expected true or false, got {type(value).__name__}")
    if kind in (FieldKind.NUMBER, FieldKind.INTEGER):
        whole = isinstance(value, int) and not isinstance(value, bool)
        if not (whole or (kind is FieldKind.NUMBER and isinstance(value, float))):
            raise CellError(f"expected a {'whole ' if kind is FieldKind.INTEGER else ''}number")
    if kind is FieldKind.ID and not _is_id(value):
        raise CellError(f"expected an id, got {value!r}")
    if kind is FieldKind.IDS and not (isinstance(value, list) and all(map(_is_id, value))):
        raise CellError("expected a list of ids")
    return escape_value(value)


def same(kind: FieldKind, stored: Any, new: Any) -> bool:
    """Whether `new` (from `read_cell`) is the stored value."""
    if kind in (FieldKind.TEXT, FieldKind.SLUG):
        return (stored or "") == (new or "") and (isinstance(stored, str) or stored is None)
    if kind is FieldKind.ID:
        return _id_text(stored) == _id_text(new)
    if kind in (FieldKind.NUMBER, FieldKind.INTEGER):
        return type(stored) is not bool and stored == new
    return type(stored) is type(new) and stored == new


def _read_text(text: str, kind: FieldKind, stored: Any) -> str:
    before = stored if isinstance(stored, str) else ""
    if text == replace_escaped(before):
        return before  # the exported cell, untouched (U+FFFD and all)
    if REPLACEMENT in text and replace_escaped(before) != unescape_text(before):
        raise CellError(
            "the cell holds U+FFFD where the stored value has a NUL or a lone surrogate, "
            "which a CSV cell cannot hold: edit this field in a JSON changeset instead"
        )
    if kind is FieldKind.SLUG and any(character.isspace() for character in text):
        raise CellError(f"a slug has no spaces: {text!r}")
    return escape_text(text)


def _read_bool(text: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise CellError(f"{text!r} is not true or false")


def _read_number(text: str, kind: FieldKind) -> int | float:
    word = text.strip()
    if _INTEGER.fullmatch(word):
        return int(word)
    if kind is FieldKind.INTEGER:
        raise CellError(f"{text!r} is not a whole number")
    try:
        number = float(word)
    except ValueError:
        raise CellError(f"{text!r} is not a number") from None
    if not math.isfinite(number):
        raise CellError(f"{text!r} is not a finite number")
    return number


def _read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise CellError(f"{text[:80]!r} is not JSON") from None


def _is_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(_INTEGER.fullmatch(value)))


def _id_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool) or value in ("", 0, "0"):
        return None
    return str(value)
