"""The field-level diff of two documents (no database)."""

from __future__ import annotations

from smuves_sync.json_diff import FieldChange, diff_documents, json_path, text_diff


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
