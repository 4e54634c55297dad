"""The cells of an edit export: every stored value is read back as itself, and a cell that
cannot be its field's value says why."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.content_edits import (
    CellError,
    FieldKind,
    export_fields,
    read_cell,
    same,
    unguard_cell,
    write_cell,
)
from smuves_sync.content_text import escape_text, escape_value
from smuves_sync.content_types import ContentType
from smuves_sync.errors import InvalidInput

TEXTS = ["", "plain", "=1+2", "'=1", "''", "'plain", " \t-x", "@home", "\uff1dfull", "a\nb\r\nc",
         "\ufdd0 mark", "caf\u00e9", "+", "-"]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
def test_text_round_trips(text: str) -> None:
    stored = escape_text(text)
    cell = write_cell(stored)
    assert read_cell(cell, FieldKind.TEXT, stored) == stored
    assert same(FieldKind.TEXT, stored, read_cell(cell, FieldKind.TEXT, stored))


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (FieldKind.BOOL, True),
        (FieldKind.BOOL, False),
        (FieldKind.BOOL, 1),
        (FieldKind.BOOL, 0),
        (FieldKind.NUMBER, 12),
        (FieldKind.NUMBER, 12.5),
        (FieldKind.NUMBER, 1e20),
        (FieldKind.INTEGER, 301),
        (FieldKind.ID, "77"),
        (FieldKind.ID, 77),
        (FieldKind.IDS, [1, 2]),
        (FieldKind.JSON, {"name": "=x", "nul": "\x00", "lone": "\ud800"}),
        (FieldKind.JSON, [{"id": "1"}]),
        (FieldKind.TEXT, None),
        (FieldKind.NUMBER, None),
    ],
)
def test_values_round_trip(kind: FieldKind, value: Any) -> None:
    stored = escape_value(value)
    assert same(kind, stored, read_cell(write_cell(stored), kind, stored))


def test_a_nul_shows_as_the_replacement_character_and_cannot_be_written_back() -> None:
    stored = escape_text("a\x00b")
    assert write_cell(stored) == "a\ufffdb"
    assert read_cell("a\ufffdb", FieldKind.TEXT, stored) == stored
    with pytest.raises(CellError, match="U\\+FFFD"):
        read_cell("a\ufffdbc", FieldKind.TEXT, stored)
    # Where the stored value had no such character, U+FFFD is only text.
    assert read_cell("x\ufffd", FieldKind.TEXT, "x") == "x\ufffd"


@pytest.mark.parametrize(
    ("kind", "cell", "said"),
    [
        (FieldKind.BOOL, "maybe", "not true or false"),
        (FieldKind.NUMBER, "12abc", "not a number"),
        (FieldKind.NUMBER, "inf", "not a finite number"),
        (FieldKind.INTEGER, "3.5", "not a whole number"),
        (FieldKind.SLUG, "a slug", "a slug has no spaces"),
        (FieldKind.IDS, "[1, true]", "not a JSON list of ids"),
        (FieldKind.JSON, "{", "not JSON"),
        (FieldKind.ID, "abc", "not an id"),
    ],
)
def test_a_bad_cell_says_why(kind: FieldKind, cell: str, said: str) -> None:
    with pytest.raises(CellError, match=said):
        read_cell(cell, kind, None)


def test_a_boolean_held_as_a_number_stays_one() -> None:
    assert read_cell("false", FieldKind.BOOL, 1) == 0
    assert read_cell("TRUE", FieldKind.BOOL, None) is True
    assert not same(FieldKind.BOOL, 1, read_cell("false", FieldKind.BOOL, 1))


def test_an_unguarded_quote_stays() -> None:
    assert unguard_cell("'plain") == "'plain"
    assert unguard_cell("'=x") == "=x"


def test_the_allow_lists() -> None:
    post = ContentType.BLOG_POST.spec.editable
    assert post is not None and "tagIds" in post.fields and "widgets" not in post.fields
    row = ContentType.HUBDB_ROW.spec.editable
    assert row is not None and row.allows("values.price") and row.allows("path")
    assert row.kind_of("values.price", {"price": "NUMBER"}) is FieldKind.NUMBER
    assert row.kind_of("values.nope", {"price": "NUMBER"}) is None
    assert ContentType.HUBDB_TABLE.spec.editable is None
    assert ContentType.BLOG.spec.editable is None
    with pytest.raises(InvalidInput, match="blog cannot be edited"):
        export_fields("blog", None, None)
    with pytest.raises(InvalidInput, match="no editable field 'widgets'"):
        export_fields("blog_post", post, ["htmlTitle", "widgets"])
    assert export_fields("blog_post", post, ["slug", " htmlTitle", "slug"]) == ("slug", "htmlTitle")
