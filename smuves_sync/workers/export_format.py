"""Turns content rows into CSV or JSON Lines one row at a time: no table is held in memory.

Rows come as stored, with the text Postgres cannot hold escaped (`smuves_sync.content_text`).
JSON Lines give back exactly what HubSpot sent: a NUL or a lone surrogate as the JSON escape
it came as. A CSV cell, which a spreadsheet reads, can hold neither: each becomes U+FFFD, the
replacement character.
"""

from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from smuves_sync.content_text import replace_escaped, unescape_json
from smuves_sync.export_files import open_export_file
from smuves_sync.models import ExportFormat

# The columns an export carries, in order; JSON Lines adds the full HubSpot object as `data`.
EXPORT_COLUMNS: Sequence[str] = (
    "hubspot_id",
    "content_type",
    "name",
    "slug",
    "url",
    "state",
    "language",
    "hubspot_updated_at",
    "archived",
    "deleted_at",
    "synced_at",
    # Last, so the columns before it keep their places in spreadsheets built on them.
    "translated_from_id",
)

# A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection"),
# in ASCII or in their fullwidth forms (which some spreadsheets fold to ASCII), and some strip
# leading whitespace (spaces, tabs, line breaks, Unicode spaces) before looking.
_FORMULA_TRIGGERS = ("=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20")


@dataclass(frozen=True, slots=True)
class ExportResult:
    rows: int
    bytes: int


def neutralise_cell(value: str) -> str:
    """Prefix a cell that a spreadsheet would evaluate with a quote, so it stays text: one
    whose first character after any leading whitespace is a formula trigger."""
    return "'" + value if value.lstrip().startswith(_FORMULA_TRIGGERS) else value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return neutralise_cell(replace_escaped(str(value)))


def _json_default(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot export a value of type {type(value).__name__}")


class _CsvSink:
    def __init__(self, stream: IO[str]) -> None:
        self._writer = csv.writer(stream, lineterminator="\n")
        self._writer.writerow(EXPORT_COLUMNS)

    def write(self, row: Mapping[str, Any]) -> None:
        self._writer.writerow([_cell(row.get(column)) for column in EXPORT_COLUMNS])


class _JsonLinesSink:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, row: Mapping[str, Any]) -> None:
        record = {column: row.get(column) for column in EXPORT_COLUMNS}
        record["data"] = row.get("data")
        line = json.dumps(record, default=_json_default, ensure_ascii=False)
        self._stream.write(unescape_json(line))
        self._stream.write("\n")


async def write_export(
    rows: AsyncIterable[Mapping[str, Any]], path: Path, export_format: ExportFormat
) -> ExportResult:
    """Stream `rows` into `path` (mode 0600, its directory 0700) as `export_format`; return
    the rows and bytes written."""
    count = 0
    with open_export_file(path) as stream:
        sink = _CsvSink(stream) if export_format is ExportFormat.CSV else _JsonLinesSink(stream)
        async for row in rows:
            sink.write(row)
            count += 1
    return ExportResult(rows=count, bytes=path.stat().st_size)
