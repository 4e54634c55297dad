"""The edit export of every editable type, synced from the fake HubSpot, imports untouched as
zero changes; HubDB cells are `values.<column>`, one column per column of the portal's tables."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.support import Sync, fake_portal, invoke, json_out, smuves

SPEC = fake_portal(4300, "12,6,12,3,8,4,5,6,2", seed=11)
pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)
EDITABLE = (
    "site_page",
    "landing_page",
    "blog_post",
    "hubdb_row",
    "blog_author",
    "blog_tag",
    "url_redirect",
)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


async def _export(sync: Sync, export_dir: Path, portal: int, content_type: str) -> Path:
    done = await smuves(
        sync.env(SMUVES_EXPORT_DIR=str(export_dir)),
        "export",
        str(portal),
        "--type",
        content_type,
        "--edit",
    )
    assert done.code == 0, done.stdout + done.stderr
    return next(export_dir.glob(f"portal-{portal}/{content_type}-run*.csv"))


async def test_every_editable_type_round_trips_and_hubdb_cells_are_checked(
    sync: Sync, tmp_path: Path
) -> None:
    portal = await sync.plant_portal()
    synced = await smuves(sync.env(), "sync", str(portal))
    assert synced.code == 0, synced.stdout + synced.stderr
    db_url = sync.settings.database_url
    assert db_url is not None

    for content_type in EDITABLE:
        path = await _export(sync, tmp_path / content_type, portal, content_type)
        rows = _rows(path)
        assert rows, content_type
        result = json_out(
            await invoke(db_url, "changeset", "import", str(portal), str(path), "--json")
        )
        assert result["counts"] == {"changed": 0, "unchanged": len(rows), "invalid": 0}, (
            content_type
        )

    rows = _rows(next((tmp_path / "hubdb_row").glob("*/*.csv")))
    header = list(rows[0])
    assert header[:5] == ["hubspot_id", "_version", "_updated", "path", "name"]
    assert "values.title" in header
    # A column one table has and another lacks: its cells are empty in the other's rows.
    lacking = next((name, row) for name in header[5:] for row in rows if row[name] == "")
    column, row_without = lacking
    having = next(row for row in rows if row[column] != "")
    having["values.title"] = "A new title"
    row_without[column] = "true"
    path = tmp_path / "hubdb_row-run99.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows([having, row_without] if having is not row_without else [having])

    result = json_out(await invoke(db_url, "changeset", "import", str(portal), str(path), "--json"))
    shown = json_out(await invoke(db_url, "changeset", "show", str(result["changeset"]), "--json"))

    items = {item["hubspot_id"]: item for item in shown["items"]}
    changed = items[having["hubspot_id"]]
    assert changed["state"] == "pending" and changed["fields"] == {"values.title": "A new title"}
    refused = items[row_without["hubspot_id"]]
    assert refused["state"] == "invalid"
    assert f"{column}: the row's table has no such column" in refused["reason"]
    assert shown["requests"]["hubdb_row"] == 4  # a read, a write, a read-back, a publish

    table = await smuves(sync.env(), "export", str(portal), "--type", "hubdb_table", "--edit")
    assert table.code == 2 and "hubdb_table cannot be edited" in table.stderr
