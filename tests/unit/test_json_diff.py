"""The field-level diff of two documents (no database)."""

from __future__ import annotations

from smuves_sync.json_diff import (
    MAX_DIFF_CHARS,
    MAX_DIFF_LINES,
    TOO_LARGE,
    FieldChange,
    diff_documents,
    json_path,
    text_diff,
)


def test_changed_added_and_removed_fields_by_path_in_document_order() -> None:
    old = {"name": "A", "widgets": {"title": {"value": "x"}}, "tagIds": [1, 2, 3], "gone": True}
    new = {"name": "B", "widgets": {"title": {"value": "y"}}, "tagIds": [1, 5], "extra": None}

    assert diff_documents(old, new) == [
        FieldChange("$.name", "changed", "A", "B"),
        FieldChange("$.widgets.title.value", "changed", "x", "y"),
        FieldChange("$.tagIds[1]", "changed", 2, 5),
        FieldChange("$.tagIds[2]", "removed", 3, None),
        FieldChange("$.gone", "removed", True, None),
        FieldChange("$.extra", "added", None, None),
    ]


def test_equal_documents_have_no_changes_and_json_types_count() -> None:
    assert diff_documents({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []
    # JSON tells these apart, Python's == does not.
    assert [c.path for c in diff_documents({"n": 1, "f": 1.0}, {"n": True, "f": 1})] == [
        "$.n",
        "$.f",
    ]
    # An object that became an array is one change of that field, not a walk inside.
    assert diff_documents({"a": {"b": 1}}, {"a": [1]}) == [
        FieldChange("$.a", "changed", {"b": 1}, [1])
    ]


def test_a_document_from_nothing_is_every_field_added() -> None:
    assert diff_documents(None, {"id": "1", "name": "N"}) == [
        FieldChange("$.id", "added", None, "1"),
        FieldChange("$.name", "added", None, "N"),
    ]


def test_keys_that_are_not_identifiers_are_quoted() -> None:
    assert json_path("$", "body html") == '$["body html"]'
    assert json_path("$.a", 'q"uote') == '$.a["q\\"uote"]'
    assert json_path("$", "ünïcode") == '$["ünïcode"]'
    assert json_path("$.rows", 0) == "$.rows[0]"


def test_long_html_is_diffed_paragraph_by_paragraph() -> None:
    same = "<p>This paragraph stays the same in both versions of the post body.</p>"
    old = f"<h1>Title</h1><p>{'old words ' * 15}</p>{same}"
    new = f"<h1>Title</h1><p>{'new words ' * 15}</p>{same}"

    [change] = diff_documents({"postBody": old}, {"postBody": new}, old_label="v1", new_label="v2")

    assert (change.path, change.kind, change.old, change.new) == ("$.postBody", "changed", old, new)
    assert change.text_diff == (
        "--- v1",
        "+++ v2",
        "@@ -1,3 +1,3 @@",
        " <h1>Title</h1>",
        f"-<p>{'old words ' * 15}</p>",
        f"+<p>{'new words ' * 15}</p>",
        f" {same}",
    )


def test_short_text_and_text_over_lines() -> None:
    assert diff_documents({"a": "x"}, {"a": "y"})[0].text_diff is None
    lines = text_diff("one\ntwo\nthree", "one\n2\nthree")
    assert lines[-3:] == ["-two", "+2", " three"]
    assert diff_documents({"a": "one\ntwo"}, {"a": "one\n2"})[0].text_diff is not None


# Two HTML bodies of 1 MiB, 131,072 paragraphs each, one of them changed.
MEGABYTE = "<p>a</p>" * 131_072
EDITED = "<p>b</p>" + MEGABYTE[8:]


def _paragraphs(count: int, word: str = "p") -> str:
    return "".join(f"<p>{word} {i}</p>" for i in range(count))


def test_bodies_past_the_bound_list_their_change_without_a_line_diff() -> None:
    old = {"name": "Post", "postBody": MEGABYTE, "gone": 1}
    new = {"name": "Post 2", "postBody": EDITED, "extra": True}

    changes = diff_documents(old, new)

    assert [(c.path, c.kind) for c in changes] == [
        ("$.name", "changed"),
        ("$.postBody", "changed"),
        ("$.gone", "removed"),
        ("$.extra", "added"),
    ]
    body = changes[1]
    assert (body.old, body.new) == (MEGABYTE, EDITED)
    assert body.text_diff == (
        f"{TOO_LARGE}: 1,048,576 and 1,048,576 characters (the line diffs of one document "
        f"compare at most {MAX_DIFF_CHARS:,} characters and {MAX_DIFF_LINES:,} lines in all)",
    )
    assert text_diff(MEGABYTE, EDITED) == list(body.text_diff)


def test_many_short_lines_are_bounded_by_their_count() -> None:
    # Few characters, but far more lines than the bound: many distinct ones, or one repeated.
    old, new = _paragraphs(MAX_DIFF_LINES), _paragraphs(MAX_DIFF_LINES, "q")
    assert len(old) + len(new) < MAX_DIFF_CHARS
    [change] = diff_documents({"b": old}, {"b": new})
    assert change.text_diff is not None
    assert change.text_diff[0].startswith(f"{TOO_LARGE}: 2,000 and 2,000 lines (")
    [repeated] = diff_documents({"b": "<br>" * 30_000}, {"b": "<br>" * 30_001})
    assert repeated.text_diff is not None
    assert repeated.text_diff[0].startswith(f"{TOO_LARGE}: 30,000 and 30,001 lines (")


def test_text_up_to_the_bound_is_diffed() -> None:
    # Lines that repeat just below difflib's autojunk share, every other one changed: its
    # slowest case (scripts/bench_json_diff.py), at the line bound.
    half = MAX_DIFF_LINES // 2
    old = "".join(f"<p>{i % 90}</p>" for i in range(half))
    new = "".join(f"<p>{i % 90}{'!' * (i % 2)}</p>" for i in range(half))
    [change] = diff_documents({"b": old}, {"b": new})
    assert change.text_diff is not None and change.text_diff[:2] == ("--- old", "+++ new")
    added = [line for line in change.text_diff if line.startswith("+<p>")]
    assert sum("!" in line for line in added) == half // 2
    # One line of the whole character budget costs difflib nothing and is shown.
    line = "x" * (MAX_DIFF_CHARS // 2 - 1)
    assert text_diff(line, line + "y") == [
        "--- old",
        "+++ new",
        "@@ -1 +1 @@",
        f"-{line}",
        f"+{line}y",
    ]
    assert text_diff(line + "z", line + "yz")[0].startswith(f"{TOO_LARGE}: 200,000 and 200,001 ")


def test_the_bound_is_shared_by_every_long_field_of_a_document() -> None:
    # Each field alone fits; together they do not: the first ones are diffed, the rest say
    # they are too large and how much the fields before them took. Every change is listed.
    count = MAX_DIFF_LINES // 2 // 100 + 3
    old = {f"f{i}": _paragraphs(100) for i in range(count)}
    new = {f"f{i}": _paragraphs(100, "q") for i in range(count)}

    changes = diff_documents(old, new)

    assert [c.path for c in changes] == [f"$.f{i}" for i in range(count)]
    diffed = [c for c in changes if c.text_diff and c.text_diff[0] == "--- old"]
    assert len(diffed) == MAX_DIFF_LINES // 200
    rest = changes[len(diffed)]
    assert rest.text_diff is not None
    assert rest.text_diff[0].startswith(f"{TOO_LARGE}: 100 and 100 lines (")
    assert rest.text_diff[0].endswith(
        f"lines in all, of which the fields before it took "
        f"{sum(len(c.old) + len(c.new) for c in diffed):,} characters and "
        f"{MAX_DIFF_LINES:,} lines)"
    )
