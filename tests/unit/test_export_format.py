import csv
import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from smuves_sync.models import ExportFormat
from smuves_sync.workers.export_format import EXPORT_COLUMNS, neutralise_cell, write_export

UPDATED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def rows(items: list[Mapping[str, Any]]) -> AsyncIterator[Mapping[str, Any]]:
    for item in items:
        yield item


def page(hubspot_id: str, name: str) -> dict[str, Any]:
    return {
        "hubspot_id": hubspot_id,
        "content_type": "site_page",
        "name": name,
        "slug": "about",
        "archived": False,
        "hubspot_updated_at": UPDATED,
        "data": {"id": hubspot_id, "name": name},
    }


@pytest.mark.parametrize("cell", ['=HYPERLINK("http://x")', "+1", "-2+3", "@SUM(A1)", "- item"])
def test_formula_cells_are_neutralised(cell: str) -> None:
    assert neutralise_cell(cell) == "'" + cell


@pytest.mark.parametrize(
    "cell",
    [
        '\uff1dHYPERLINK("http://x")',  # fullwidth = + - @
        "\uff0b1",
        "\uff0d2+3",
        "\uff20SUM(A1)",
        " =1+1",
        "\t=1+1",
        "\r=1+1",
        "\n=1+1",
        "\r\n@SUM(A1)",
        "\x0b\x0c+1",
        "\u00a0=1",  # no-break space
        "\u3000=1",  # ideographic space
        "\u2028-1",  # line separator
        " \t \uff1d1",
    ],
)
def test_fullwidth_triggers_and_triggers_behind_whitespace_are_neutralised(cell: str) -> None:
    assert neutralise_cell(cell) == "'" + cell


@pytest.mark.parametrize(
    "cell", ["About us", "", "   ", "\tx", "  indented text", "a = b", "e-mail", "x\n=1", "\uff21"]
)
def test_plain_cells_are_untouched(cell: str) -> None:
    # Only the first character after leading whitespace counts: a trigger further in is text.
    assert neutralise_cell(cell) == cell


async def test_csv_export_neutralises_and_counts(tmp_path: Path) -> None:
    target = tmp_path / "out" / "pages.csv"
    result = await write_export(
        rows([page("1", '=HYPERLINK("http://evil")'), page("2", "Home")]), target, ExportFormat.CSV
    )
    with target.open(newline="") as stream:
        parsed = list(csv.reader(stream))
    assert parsed[0] == list(EXPORT_COLUMNS)
    assert [row[0] for row in parsed[1:]] == ["1", "2"]
    assert parsed[1][2] == '\'=HYPERLINK("http://evil")'
    assert parsed[2][7] == UPDATED.isoformat()
    assert result.rows == 2
    assert result.bytes == target.stat().st_size


async def test_jsonl_export_keeps_full_object(tmp_path: Path) -> None:
    target = tmp_path / "pages.jsonl"
    result = await write_export(rows([page("7", "=1+1")]), target, ExportFormat.JSONL)
    lines = target.read_text().splitlines()
    assert result.rows == len(lines) == 1
    record = json.loads(lines[0])
    # JSON is data, not a spreadsheet: values stay exactly as HubSpot had them.
    assert record["name"] == "=1+1"
    assert record["data"] == {"id": "7", "name": "=1+1"}
