"""`smuves export` leaves the objects marked deleted out unless --include-deleted keeps them,
records which on the exports row, and says how many in its last line."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from smuves_sync.db import Database
from smuves_sync.db.content import content_count_by_type
from smuves_sync.export_files import ExportFile, export_file_path
from smuves_sync.models import ContentType, ExportFormat
from tests.support import query, smuves, smuves_env
from tests.support.factories import Factory

TYPE = ContentType.BLOG_POST
# Of the 50 planted posts (every tenth archived): seven gone from HubSpot, one archived too.
DELETED = [f"{n:08d}" for n in (3, 10, 17, 24, 31, 38, 45)]


async def _portal_with_deleted_posts(factory: Factory, db: Database) -> int:
    portal = await factory.portal()
    await factory.content_rows(await factory.run(portal), 50, content_type=TYPE)
    await query(
        db, "versions_mark_deleted", portal_id=portal, content_type=str(TYPE), hubspot_ids=DELETED
    )
    return portal


async def _export(db_url: str, export_dir: Path, portal: int, *flags: str) -> str:
    """`smuves export` of the posts, worked by its own worker; what it printed."""
    env = smuves_env(db_url, SMUVES_EXPORT_DIR=str(export_dir))
    done = await smuves(env, "export", str(portal), "--type", str(TYPE), *flags)
    assert done.code == 0, (done.stdout, done.stderr)
    return " ".join(done.stdout.split())  # however the console wrapped it


def _csv_rows(export_dir: Path, portal: int, run_id: int) -> list[dict[str, Any]]:
    path = export_file_path(export_dir, ExportFile(portal, run_id, TYPE, ExportFormat.CSV))
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


async def test_an_export_leaves_the_deleted_objects_out_and_says_how_many(
    db: Database, db_url: str, factory: Factory, tmp_path: Path
) -> None:
    portal = await _portal_with_deleted_posts(factory, db)

    said = await _export(db_url, tmp_path, portal)

    assert "exported 43 rows (deleted objects left out: 7), " in said
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["include_deleted"]) == ("completed", False)
    assert (export["row_count"], export["deleted_count"]) == (43, 7)
    rows = _csv_rows(tmp_path, portal, export["run_id"])
    stored = (await content_count_by_type(db, [portal]))[portal, TYPE]
    assert len(rows) == stored.live + stored.archived == export["row_count"]
    assert {r["hubspot_id"] for r in rows}.isdisjoint(DELETED)
    assert {r["deleted_at"] for r in rows} == {""}


async def test_include_deleted_keeps_them_and_says_how_many_it_includes(
    db: Database, db_url: str, factory: Factory, tmp_path: Path
) -> None:
    portal = await _portal_with_deleted_posts(factory, db)

    said = await _export(db_url, tmp_path, portal, "--include-deleted")

    assert "exported 50 rows, including 7 deleted objects, " in said
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["include_deleted"]) == ("completed", True)
    assert (export["row_count"], export["deleted_count"]) == (50, 7)
    rows = _csv_rows(tmp_path, portal, export["run_id"])
    assert len(rows) == 50
    assert sorted(r["hubspot_id"] for r in rows if r["deleted_at"]) == DELETED
