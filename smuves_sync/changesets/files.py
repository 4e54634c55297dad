"""Reading a changeset's file: an edit export's CSV (changed or not), JSON Lines, or the API's
JSON document, into rows of one content type.

    changes = read_changes(data, media=Media.CSV, content_type=None, filename="site_page-run2.csv",
                           max_bytes=settings.changeset_max_bytes)

A file that cannot be read is refused whole (`ChangesetFileRefused`, one line): over the size
cap, not UTF-8, not CSV or JSON, a column the type does not allow, no `hubspot_id` column or
cell, an id twice, no type to read it as. What a cell says is judged later, item by item
(`compare`). The type comes from the argument, else the document or the lines, else the name
an edit export's file has (`<type>-run<N>.csv`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from smuves_sync.content_edits import Editable
from smuves_sync.content_fields import usable_id
from smuves_sync.errors import InvalidInput
from smuves_sync.models import ContentType

# The columns an edit export writes before the fields (`_updated` is informative: the base's
# own updated text is read from the stored version).
ID_COLUMN, VERSION_COLUMN, UPDATED_COLUMN = "hubspot_id", "_version", "_updated"
META_COLUMNS = (ID_COLUMN, VERSION_COLUMN, UPDATED_COLUMN)
_EXPORT_NAME = re.compile(r"(?:portal-[0-9]+-)?([a-z][a-z0-9_]*?)-(?:run)?[0-9]+\.(?:csv|jsonl)$")


class ChangesetFileRefused(InvalidInput):
    """A changeset file that cannot be read; nothing of it is stored."""


class Media(StrEnum):
    """What a changeset's bytes are."""

    CSV = "csv"
    JSONL = "jsonl"
    JSON = "json"


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """One object's row: its id, the version it was made from, and its cells.

    `cells` are CSV text (`text=True`), JSON values given by a person (`text=False`), or, for
    a rollback, values already in stored form (`stored=True`)."""

    hubspot_id: str
    base_version: int | None
    cells: Mapping[str, Any]
    text: bool = True
    stored: bool = False
    # A `_version` cell that is no version number (the item is invalid for it).
    version_error: str | None = None


@dataclass(frozen=True, slots=True)
class Changes:
    """A readable file's rows, all of one type."""

    content_type: ContentType
    rows: Sequence[ChangeRow] = field(default_factory=tuple)


def editable_of(content_type: ContentType) -> Editable:
    """The type's allow-list; `InvalidInput` for a type that cannot be edited."""
    editable = content_type.spec.editable
    if editable is None:
        raise InvalidInput(
            f"{content_type} cannot be edited: HubSpot's API writes none of its fields "
            f"that a changeset may change"
        )
    return editable


def type_named(word: str) -> ContentType:
    """The content type of `word`; `InvalidInput` naming the known ones."""
    try:
        return ContentType(word)
    except ValueError:
        known = ", ".join(t.value for t in ContentType)
        raise InvalidInput(f"unknown content type {word!r} (known: {known})") from None


def read_changes(
    data: bytes,
    *,
    media: Media,
    content_type: ContentType | None,
    filename: str | None,
    max_bytes: int,
) -> Changes:
    """The rows of a changeset file; `ChangesetFileRefused` when it cannot be read."""
    if len(data) > max_bytes:
        raise ChangesetFileRefused(
            f"the file is {len(data):,} bytes, more than the {max_bytes:,} a changeset may "
            f"have (SMUVES_CHANGESET_MAX_BYTES)"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ChangesetFileRefused(
            f"the file is not UTF-8 text (byte {error.start:,} is {data[error.start]:#04x}); "
            f"save it as CSV UTF-8"
        ) from None
    if media is Media.CSV:
        wanted = _type_of(content_type, None, filename)
        return Changes(wanted, _csv_rows(text, editable_of(wanted)))
    documents = _json_documents(text, media)
    named = {str(d.get("content_type")) for d in documents if d.get("content_type") is not None}
    if len(named) > 1:
        raise ChangesetFileRefused(f"the file mixes content types: {', '.join(sorted(named))}")
    wanted = _type_of(content_type, next(iter(named), None), filename)
    return Changes(wanted, _json_rows(documents, wanted, editable_of(wanted)))


def _type_of(given: ContentType | None, named: str | None, filename: str | None) -> ContentType:
    if named is not None:
        found = type_named(named)
        if given is not None and given is not found:
            raise ChangesetFileRefused(f"the file is of {found}, not of {given}")
        return found
    if given is not None:
        return given
    matched = _EXPORT_NAME.search(filename or "")
    if matched is not None and matched.group(1) in {t.value for t in ContentType}:
        return ContentType(matched.group(1))
    raise ChangesetFileRefused("which content type is the file of? name it (--type, content_type)")


def _csv_rows(text: str, editable: Editable) -> list[ChangeRow]:
    try:
        lines = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as error:
        raise ChangesetFileRefused(f"the file is not CSV: {error}") from None
    lines = [line for line in lines if any(cell != "" for cell in line)]
    if not lines:
        raise ChangesetFileRefused("the file is empty: not even a header")
    header = lines[0]
    _check_columns(header, editable)
    rows: list[ChangeRow] = []
    for number, line in enumerate(lines[1:], start=2):
        if len(line) != len(header):
            raise ChangesetFileRefused(
                f"line {number} has {len(line)} cells, the header {len(header)}"
            )
        cells = dict(zip(header, line, strict=True))
        version, problem = _version(cells.pop(VERSION_COLUMN, ""))
        cells.pop(UPDATED_COLUMN, None)
        rows.append(
            ChangeRow(_id(cells.pop(ID_COLUMN), number), version, cells, True, False, problem)
        )
    _no_repeats(rows)
    return rows


def _check_columns(columns: Sequence[str], editable: Editable) -> None:
    if ID_COLUMN not in columns:
        raise ChangesetFileRefused(f"the file has no {ID_COLUMN!r} column")
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise ChangesetFileRefused(f"column {column!r} appears twice")
        seen.add(column)
        if column not in META_COLUMNS and not editable.allows(column):
            allowed = ", ".join(
                [*editable.fields, *(["values.<column>"] if editable.values else [])]
            )
            raise ChangesetFileRefused(f"unknown column {column!r} (editable: {allowed})")


def _json_documents(text: str, media: Media) -> list[Mapping[str, Any]]:
    documents: list[Any]
    try:
        if media is Media.JSONL:
            documents = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            parsed = json.loads(text)
            if not isinstance(parsed, Mapping) or not isinstance(parsed.get("changes"), list):
                raise ChangesetFileRefused('the JSON is not {"content_type": …, "changes": […]}')
            documents = [
                {**change, "content_type": parsed.get("content_type")}
                if isinstance(change, Mapping)
                else change
                for change in parsed["changes"]
            ]
    except json.JSONDecodeError as error:
        raise ChangesetFileRefused(f"the file is not JSON: {error}") from None
    for number, document in enumerate(documents, start=1):
        if not isinstance(document, Mapping):
            raise ChangesetFileRefused(f"change {number} is not a JSON object")
    return documents


def _json_rows(
    documents: Iterable[Mapping[str, Any]], content_type: ContentType, editable: Editable
) -> list[ChangeRow]:
    rows: list[ChangeRow] = []
    for number, document in enumerate(documents, start=1):
        flat = {k: v for k, v in document.items() if k not in ("fields", "content_type")}
        nested = document.get("fields", {})
        if not isinstance(nested, Mapping):
            raise ChangesetFileRefused(f"change {number}: `fields` is not a JSON object")
        given = flat.pop("base_version", flat.pop(VERSION_COLUMN, None))
        flat.pop(UPDATED_COLUMN, None)
        hubspot_id = flat.pop(ID_COLUMN, None)
        cells = {**flat, **nested}
        _check_columns([ID_COLUMN, *cells], editable)
        if isinstance(hubspot_id, int) and not isinstance(hubspot_id, bool):
            hubspot_id = str(hubspot_id)
        if not isinstance(hubspot_id, str):
            raise ChangesetFileRefused(f"change {number} has no {ID_COLUMN}")
        version, problem = _version(given)
        rows.append(ChangeRow(_id(hubspot_id, number), version, cells, False, False, problem))
    _no_repeats(rows)
    return rows


def _id(value: str, number: int) -> str:
    if value.strip() == "":
        raise ChangesetFileRefused(f"line {number} has no {ID_COLUMN}")
    problem = usable_id(value.strip())
    if problem is not None:
        raise ChangesetFileRefused(f"line {number}: the {ID_COLUMN} is no id: {problem}")
    return value.strip()


def _version(value: Any) -> tuple[int | None, str | None]:
    if value is None or value == "":
        return None, None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31:
        return value, None
    if isinstance(value, str) and value.strip().isdigit() and 0 < int(value) < 2**31:
        return int(value), None
    return None, f"{VERSION_COLUMN} {value!r} is not a version number"


def _no_repeats(rows: Sequence[ChangeRow]) -> None:
    seen: set[str] = set()
    for row in rows:
        if row.hubspot_id in seen:
            raise ChangesetFileRefused(f"{ID_COLUMN} {row.hubspot_id} appears twice")
        seen.add(row.hubspot_id)
