"""A database whose content history was written into content_versions alone (every version,
the current first ones included) upgrades to the first versions kept in their rows: every
reader answers as before, the lone first versions leave content_versions, and the history
goes on from there."""

from __future__ import annotations

import shutil
from pathlib import Path

from smuves_sync.db import Database, pool_for
from smuves_sync.db.migrations import FUNCTIONS_DIR, find_migrations_dir, migrate
from smuves_sync.db.versions import version_documents, version_latest, versions_of_object
from smuves_sync.models import ContentEvent, ContentType
from tests.support import query

# The triggers of content history as they were when every version was a row of
# content_versions (migrations/functions/history.sql before the upgrade).
OLD_HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "history_before_rows"
UPGRADE = "0004_history_current_row.sql"
PORTAL = 4242


def _before(tmp_path: Path) -> Path:
    """The migrations as they were: without the upgrade, with the old triggers."""
    directory = tmp_path / "migrations"
    shutil.copytree(find_migrations_dir(), directory)
    (directory / UPGRADE).unlink()
    shutil.copy(OLD_HISTORY / "history.sql", directory / FUNCTIONS_DIR / "history.sql")
    return directory


async def _versions(url: str, source: str) -> list[dict[str, object]]:
    return await query(url, "history_upgrade_versions", parts={"source": source}, portal_id=PORTAL)


async def _edit(url: str, name: str | None, *ids: str) -> None:
    await query(url, "history_upgrade_edit", portal_id=PORTAL, name=name, hubspot_ids=list(ids))


async def test_history_written_the_old_way_reads_the_same_after_the_upgrade(
    empty_db_url: str, tmp_path: Path
) -> None:
    url = empty_db_url
    await migrate(url, _before(tmp_path))
    await query(url, "history_upgrade_portal", portal_id=PORTAL)
    await query(url, "history_upgrade_items", portal_id=PORTAL, n=5)
    await _edit(url, "Edited", "1", "2")
    await _edit(url, None, "1")  # its first document again
    await query(url, "history_upgrade_archive", portal_id=PORTAL, hubspot_ids=["2"])
    await query(
        url, "versions_mark_deleted", portal_id=PORTAL, content_type="site_page", hubspot_ids=["3"]
    )
    await query(
        url, "versions_remove_item", portal_id=PORTAL, content_type="site_page", hubspot_id="4"
    )
    before = await _versions(url, "content_versions")
    assert len(before) == 3 + 3 + 2 + 2 + 1

    await migrate(url)

    assert await _versions(url, "content_history") == before
    # '5' never changed: its one version is its row now. The others kept theirs.
    [stored] = await query(url, "history_upgrade_stored", portal_id=PORTAL)
    assert stored == {"versions": len(before) - 1, "rows": ["1:3", "2:3", "3:2", "5:1"]}
    async with pool_for(url, max_size=1) as pool:
        db = Database(pool)
        assert await version_latest(db, PORTAL, ContentType.SITE_PAGE, "4") == 2
        assert await version_latest(db, PORTAL, ContentType.SITE_PAGE, "5") == 1
        await _edit(url, "Later", "5", "1")
        five = await versions_of_object(db, PORTAL, ContentType.SITE_PAGE, "5")
        assert [(v.version, v.event) for v in five] == [
            (1, ContentEvent.CREATED),
            (2, ContentEvent.UPDATED),
        ]
        assert five[0].superseded_at is not None and five[1].current
        found = await version_documents(db, PORTAL, ContentType.SITE_PAGE, "5", [1, 2])
        assert [found[n].document["name"] for n in (1, 2)] == ["Page 5", "Later"]
        one = await versions_of_object(db, PORTAL, ContentType.SITE_PAGE, "1")
        assert [v.version for v in one] == [1, 2, 3, 4]
    moved = [v for v in await _versions(url, "content_history") if v["hubspot_id"] == "5"]
    assert moved[0]["id"] == next(v["id"] for v in before if v["hubspot_id"] == "5")
