"""Pushing HubDB rows: written to the tables' drafts; with `--publish live` a table is published
only when its draft held no other unpublished edits, else its items are held."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.push_start import start_push
from smuves_sync.testing.fake_hubspot import PortalSpec
from smuves_sync.testing.push_bench import plant_changeset
from smuves_sync.workers.runner import Runner
from tests.support import Sync, query
from tests.support.push import item_states
from tests.support.sync import TOKEN

ROW = ContentType.HUBDB_ROW
PORTAL = 7302
pytestmark = pytest.mark.hubspot(
    PortalSpec(portal_id=PORTAL, token=TOKEN, site_pages=0, landing_pages=0, blog_posts=0,
               hubdb_tables=2, rows_per_table=6, archived_share=0.0),
    ten_second_limit=None,
)  # fmt: skip


async def _fetched(sync: Sync) -> tuple[int, dict[str, list[str]]]:
    portal = await sync.plant_portal()
    await start_fetch(sync.db, portal, [ContentType.HUBDB_TABLE, ROW])
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=2, burst=True
    ).run()
    tables: dict[str, list[str]] = {}
    for truth in sync.fake.ground_truth(portal, ROW):
        tables.setdefault(truth.hubspot_id.split(":")[0], []).append(truth.hubspot_id)
    return portal, {t: sorted(ids) for t, ids in sorted(tables.items())}


async def _push(sync: Sync, changeset_id: int, publish: str = "live") -> None:
    await start_push(sync.db, changeset_id, publish=publish)
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.PUSH], concurrency=1, burst=True
    ).run()


def _published(sync: Sync, portal: int) -> dict[str, dict[str, Any]]:
    return {t.hubspot_id: t.data or {} for t in sync.fake.ground_truth(portal, ROW, with_data=True)}


async def test_a_clean_table_is_published_and_one_with_others_edits_is_held(sync: Sync) -> None:
    portal, tables = await _fetched(sync)
    (clean, clean_rows), (busy, busy_rows) = tables.items()
    edits = {
        clean_rows[0]: {"values.title": "Clean one", "name": "renamed"},
        clean_rows[1]: {"values.title": "Clean two"},
        busy_rows[0]: {"values.title": "Busy one"},
    }
    changeset = await plant_changeset(sync.db, portal, ROW, edits)
    # A colleague's unfinished draft edit of another row of the busy table.
    sync.fake.person_edit(portal, ROW, busy_rows[3], {"values.title": "half done"}, draft=True)

    await _push(sync, changeset.id)

    states = await item_states(sync.db, changeset.id)
    assert states[clean_rows[0]][0] == "applied" and states[clean_rows[1]][0] == "applied"
    assert states[busy_rows[0]] == ("held", "the draft has other edits")
    published = _published(sync, portal)
    assert published[clean_rows[0]]["values"]["title"] == "Clean one"
    assert published[clean_rows[0]]["name"] == "renamed"
    # Nothing of the busy table went live: neither our row nor the colleague's.
    assert published[busy_rows[0]]["values"]["title"] != "Busy one"
    assert published[busy_rows[3]]["values"]["title"] != "half done"
    assert sorted(sync.fake.unpublished_rows(portal, busy)) == sorted([busy_rows[0], busy_rows[3]])
    assert sync.fake.unpublished_rows(portal, clean) == []
    assert await sync.stored(portal, ROW) == sync.truth(portal, ROW)
    versions = await query(sync.db, "push_versions_of_changeset", changeset_id=changeset.id)
    assert {v["hubspot_id"] for v in versions} == {clean_rows[0], clean_rows[1]}


async def test_publish_draft_writes_the_rows_drafts_only(sync: Sync) -> None:
    portal, tables = await _fetched(sync)
    (table, rows), _ = tables.items()
    before = _published(sync, portal)[rows[0]]["values"]["title"]
    changeset = await plant_changeset(sync.db, portal, ROW, {rows[0]: {"values.title": "D"}})

    await _push(sync, changeset.id, publish="draft")

    assert (await item_states(sync.db, changeset.id))[rows[0]][0] == "applied"
    assert _published(sync, portal)[rows[0]]["values"]["title"] == before
    assert sync.fake.unpublished_rows(portal, table) == [rows[0]]
    assert "publish" not in {e["op"] for e in sync.fake.write_log(portal)}
