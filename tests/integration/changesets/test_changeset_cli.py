"""`smuves export --edit` and `smuves changeset import/show` through the real entry point: the
edit export round-trips exactly, changed cells become items, bad cells invalid items, and an
unreadable file is refused whole."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from smuves_sync.db import Database
from tests.integration.test_content_store import record
from tests.integration.test_content_versions import TYPE, fetch
from tests.support import invoke, json_out, query
from tests.support.commands import smuves, smuves_env
from tests.support.factories import Factory

# Values a spreadsheet and the stored form make hard: a formula, a leading quote, a NUL, a
# line break, a lone surrogate in a list, a number id.
ODD: dict[str, Any] = {
    "htmlTitle": "=SUM(A1:A3)",
    "metaDescription": "'quoted' and\nmore",
    "featuredImageAltText": "a NUL \x00 inside",
    "postSummary": " -starts with a space",
    "tagIds": [11, 12],
    "blogAuthorId": "77",
    "useFeaturedImage": True,
    "linkRelCanonicalUrl": None,
}


@pytest.fixture
async def portal(factory: Factory, worker_db: Database) -> int:
    """Three posts: 1 with odd values, 2 plain, 3 deleted in HubSpot; post 1 twice stored."""
    portal = await factory.portal()
    await fetch(factory, worker_db, portal, [record("1"), record("2"), record("3")])
    await fetch(
        factory,
        worker_db,
        portal,
        [record("1", **ODD), record("2", htmlTitle="Plain"), record("3")],
        gone=("3",),
    )
    return portal


async def _edit_export(db_url: str, tmp_path: Path, portal: int, *flags: str) -> Path:
    env = smuves_env(db_url, SMUVES_EXPORT_DIR=str(tmp_path / "exports"))
    done = await smuves(env, "export", str(portal), "--type", str(TYPE), "--edit", *flags)
    assert done.code == 0, (done.stdout, done.stderr)
    return next((tmp_path / "exports").glob(f"portal-{portal}/*.csv"))


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


async def _import(db_url: str, portal: int, path: Path, *flags: str) -> dict[str, Any]:
    found: dict[str, Any] = json_out(
        await invoke(db_url, "changeset", "import", str(portal), str(path), "--json", *flags)
    )
    return found


async def test_an_untouched_edit_export_imports_as_zero_changes(
    db_url: str, portal: int, tmp_path: Path
) -> None:
    path = await _edit_export(db_url, tmp_path, portal)
    rows = _rows(path)

    assert list(rows[0])[:3] == ["hubspot_id", "_version", "_updated"]
    assert "htmlTitle" in rows[0] and "tagIds" in rows[0] and "widgets" not in rows[0]
    by_id = {row["hubspot_id"]: row for row in rows}
    assert set(by_id) == {"1", "2"}  # the deleted post is left out
    odd = by_id["1"]
    assert odd["_version"] == "2"
    assert odd["htmlTitle"] == "'=SUM(A1:A3)"  # the formula guard
    assert odd["metaDescription"] == "''quoted' and\nmore"
    assert odd["postSummary"] == "' -starts with a space"
    assert odd["featuredImageAltText"] == "a NUL \ufffd inside"
    assert (odd["tagIds"], odd["blogAuthorId"], odd["useFeaturedImage"]) == (
        "[11,12]",
        "77",
        "true",
    )
    assert odd["linkRelCanonicalUrl"] == ""

    assert await _import(db_url, portal, path) == {
        "changeset": 1,
        "counts": {"changed": 0, "unchanged": 2, "invalid": 0},
    }


async def test_changed_cells_become_items_and_bad_cells_invalid_ones(
    db_url: str, portal: int, tmp_path: Path
) -> None:
    rows = _rows(await _edit_export(db_url, tmp_path, portal))
    by_id = {row["hubspot_id"]: row for row in rows}
    by_id["1"]["htmlTitle"] = "'=SUM(A1:A4)"
    by_id["1"]["tagIds"] = "[12]"
    by_id["2"]["useFeaturedImage"] = "maybe"
    rows.append({**by_id["2"], "hubspot_id": "3"})  # deleted in HubSpot
    rows.append({**by_id["2"], "hubspot_id": "404"})  # never held
    path = _write(tmp_path / "blog_post-run9.csv", rows)

    result = await _import(db_url, portal, path)
    shown = json_out(await invoke(db_url, "changeset", "show", str(result["changeset"]), "--json"))
    text = await invoke(db_url, "changeset", "show", str(result["changeset"]))

    assert result["counts"] == {"changed": 1, "unchanged": 0, "invalid": 3}
    items = {item["hubspot_id"]: item for item in shown["items"]}
    assert items["1"]["state"] == "pending"
    assert items["1"]["fields"] == {"htmlTitle": "=SUM(A1:A4)", "tagIds": [12]}
    assert items["1"]["before"] == {"htmlTitle": "=SUM(A1:A3)", "tagIds": [11, 12]}
    assert items["1"]["base_version"] == 2
    assert items["2"]["state"] == "invalid"
    assert "useFeaturedImage: 'maybe' is not true or false" in items["2"]["reason"]
    assert "deleted in HubSpot" in items["3"]["reason"]
    assert "has no blog_post 404" in items["404"]["reason"]
    assert shown["requests"] == {"total": 3, "blog_post": 3}
    assert "htmlTitle: '=SUM(A1:A3)' → '=SUM(A1:A4)'" in text.stdout


async def test_a_cell_with_the_replacement_character_is_not_written_for_a_nul(
    db_url: str, portal: int, tmp_path: Path
) -> None:
    rows = _rows(await _edit_export(db_url, tmp_path, portal, "--fields", "featuredImageAltText"))
    assert list(rows[0]) == ["hubspot_id", "_version", "_updated", "featuredImageAltText"]
    rows[0]["featuredImageAltText"] = "a NUL \ufffd inside, edited"
    path = _write(tmp_path / "blog_post-run9.csv", [rows[0]])

    result = await _import(db_url, portal, path)
    shown = json_out(await invoke(db_url, "changeset", "show", str(result["changeset"]), "--json"))

    assert result["counts"] == {"changed": 0, "unchanged": 0, "invalid": 1}
    assert "U+FFFD" in shown["items"][0]["reason"]


async def test_an_older_version_is_compared_as_it_was_and_warned_of(
    db_url: str, portal: int, tmp_path: Path
) -> None:
    """A row made from version 1 of post 2 changes its title from version 1's (none) and
    warns that the object is newer now."""
    path = tmp_path / "blog_post-run1.csv"
    path.write_text("hubspot_id,_version,htmlTitle\n2,1,Mine\n", encoding="utf-8")

    result = await _import(db_url, portal, path)
    shown = json_out(await invoke(db_url, "changeset", "show", str(result["changeset"]), "--json"))

    [item] = shown["items"]
    assert (item["state"], item["fields"], item["before"]) == (
        "pending",
        {"htmlTitle": "Mine"},
        {"htmlTitle": None},
    )
    assert item["warnings"] == ["changed since version 1 (the stored object is at version 2)"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"hubspot_id,widgets\n1,x\n", "unknown column 'widgets'"),
        (b"name,htmlTitle\nx,y\n", "no 'hubspot_id' column"),
        (b"hubspot_id,htmlTitle\n1,caf\xe9\n", "not UTF-8"),
        (b"hubspot_id,htmlTitle\n1,a\n1,b\n", "hubspot_id 1 appears twice"),
        (b"hubspot_id,htmlTitle\n1,a,b\n", "line 2 has 3 cells, the header 2"),
    ],
)
async def test_a_file_that_cannot_be_read_is_refused_whole(
    db: Database, db_url: str, portal: int, tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "blog_post-run1.csv"
    path.write_bytes(content)

    result = await invoke(db_url, "changeset", "import", str(portal), str(path))

    assert result.exit_code == 2, result.output
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert await query(db, "changesets_all") == []


async def test_a_file_over_the_size_cap_or_of_a_type_without_edits_is_refused(
    db: Database, db_url: str, portal: int, tmp_path: Path
) -> None:
    path = tmp_path / "edits.csv"
    path.write_text("hubspot_id,htmlTitle\n1,a\n", encoding="utf-8")
    too_big = await invoke(
        db_url,
        "changeset",
        "import",
        str(portal),
        str(path),
        "--type",
        "blog_post",
        env={"SMUVES_CHANGESET_MAX_BYTES": "10"},
    )
    no_type = await invoke(db_url, "changeset", "import", str(portal), str(path))
    table = await invoke(
        db_url, "changeset", "import", str(portal), str(path), "--type", "hubdb_table"
    )

    assert (too_big.exit_code, no_type.exit_code, table.exit_code) == (2, 2, 2)
    assert "more than the 10 a changeset may have" in too_big.stderr
    assert "which content type" in no_type.stderr
    assert "hubdb_table cannot be edited" in table.stderr
    assert await query(db, "changesets_all") == []


async def test_json_lines_name_fields_by_their_values(
    db_url: str, portal: int, tmp_path: Path
) -> None:
    path = tmp_path / "edits.jsonl"
    lines = [
        '{"hubspot_id": "1", "base_version": 2, "fields": {"htmlTitle": "=SUM(A1:A3)"}}',
        '{"hubspot_id": "2", "fields": {"tagIds": "x"}}',
    ]
    path.write_text("\n".join(lines), encoding="utf-8")

    result = await _import(db_url, portal, path, "--type", "blog_post")

    assert result["counts"] == {"changed": 0, "unchanged": 1, "invalid": 1}


async def test_a_rollback_is_based_on_the_pushed_versions_and_warns_of_later_edits(
    factory: Factory, db_url: str, portal: int
) -> None:
    """Post 1's push made version 1 (someone changed it since: version 2 now); post 2's push
    made its version 2 (still current) but someone has since put one field back."""
    pushed = await factory.changeset(
        portal,
        *_items(
            {"hubspot_id": "1", "state": "applied", "applied_version": 1,
             "fields": {"name": "Post 1"}, "before": {"name": "Earlier"}},
            {"hubspot_id": "2", "state": "applied", "applied_version": 2,
             "fields": {"htmlTitle": "Plain", "name": "Renamed"},
             "before": {"htmlTitle": None, "name": "Post 2"}},
            {"hubspot_id": "3", "state": "conflict", "applied_version": None,
             "fields": {"name": "x"}, "before": {"name": "y"}},
        ),
        content_type=TYPE,
    )  # fmt: skip

    result = json_out(await invoke(db_url, "changeset", "rollback", str(pushed), "--json"))
    shown = json_out(await invoke(db_url, "changeset", "show", str(result["changeset"]), "--json"))
    again = await invoke(db_url, "changeset", "rollback", str(result["changeset"]))

    assert result["counts"] == {"changed": 2, "unchanged": 0, "invalid": 0}
    assert shown["changeset"]["source"] == "rollback"
    assert shown["changeset"]["rolls_back"] == pushed
    items = {item["hubspot_id"]: item for item in shown["items"]}
    assert set(items) == {"1", "2"}  # only what was applied
    assert (items["1"]["base_version"], items["1"]["fields"]) == (1, {"name": "Earlier"})
    assert items["1"]["warnings"] == ["changed since version 1 (the stored object is at version 2)"]
    # Post 2's name is already what it was before the push: only the title goes back.
    assert (items["2"]["base_version"], items["2"]["fields"]) == (2, {"htmlTitle": None})
    assert items["2"]["before"] == {"htmlTitle": "Plain"} and items["2"]["warnings"] == []
    assert again.exit_code == 2 and "has no applied items" in again.stderr


def _items(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return list(items)
