"""Pushing site pages through the real queue, roles and fake: rebase or conflict, the lost answer
decided by reading back, a 207's failed input, the split 400, 429s, and `--publish draft`."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.db.changesets import changeset_get
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.push_start import start_push
from smuves_sync.testing.fake_hubspot import PortalSpec, WriteFault, WriteFaultKind
from smuves_sync.testing.push_bench import plant_changeset
from smuves_sync.workers.runner import Runner
from tests.support import Sync, query
from tests.support.push import item_states
from tests.support.sync import TOKEN

PAGE = ContentType.SITE_PAGE
PORTAL = 7301
pytestmark = pytest.mark.hubspot(
    PortalSpec(portal_id=PORTAL, token=TOKEN, site_pages=12, landing_pages=0, blog_posts=0,
               hubdb_tables=0, archived_share=0.0),
    ten_second_limit=None,
)  # fmt: skip


async def _fetched(sync: Sync) -> tuple[int, list[str]]:
    portal = await sync.plant_portal()
    await start_fetch(sync.db, portal, [PAGE])
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True
    ).run()
    ids = sorted(t.hubspot_id for t in sync.fake.ground_truth(portal, PAGE))
    return portal, ids


async def _push(sync: Sync, changeset_id: int, publish: str = "live") -> int:
    started = await start_push(sync.db, changeset_id, publish=publish)
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.PUSH], concurrency=1, burst=True
    ).run()
    return started.run.id


def _live(sync: Sync, portal: int) -> dict[str, dict[str, Any]]:
    return {
        t.hubspot_id: t.data or {} for t in sync.fake.ground_truth(portal, PAGE, with_data=True)
    }


async def test_conflicts_are_not_written_and_untouched_fields_are_rebased(sync: Sync) -> None:
    portal, ids = await _fetched(sync)
    a, b, c = ids[:3]
    changeset = await plant_changeset(
        sync.db,
        portal,
        PAGE,
        {a: {"htmlTitle": "A new"}, b: {"htmlTitle": "B new"}, c: {"metaDescription": "C"}},
    )
    # People edit b's title (the field it changes) and c's name (not its field) meanwhile.
    sync.fake.person_edit(portal, PAGE, b, {"htmlTitle": "B by a person"})
    sync.fake.person_edit(portal, PAGE, c, {"name": "C renamed by a person"})

    await _push(sync, changeset.id)

    states = await item_states(sync.db, changeset.id)
    assert states[a][0] == "applied" and states[c][0] == "applied"
    assert states[b][0] == "conflict" and "htmlTitle" in (states[b][1] or "")
    live = _live(sync, portal)
    assert live[a]["htmlTitle"] == "A new"
    assert live[b]["htmlTitle"] == "B by a person"
    assert (live[c]["metaDescription"], live[c]["name"]) == ("C", "C renamed by a person")
    pushed = await changeset_get(sync.db, changeset.id)
    assert pushed is not None and pushed.status == "pushed"
    # The store holds what HubSpot shows, and history marks the versions as this changeset's.
    assert await sync.stored(portal, PAGE) == sync.truth(portal, PAGE)
    versions = await query(sync.db, "push_versions_of_changeset", changeset_id=changeset.id)
    assert [(v["hubspot_id"], v["version"]) for v in versions] == [
        (h, v["applied_version"]) for h, v in ((v["hubspot_id"], v) for v in versions)
    ]
    assert {v["hubspot_id"] for v in versions} == {a, c}


@pytest.mark.parametrize(
    "kind", [WriteFaultKind.COMMIT_THEN_STATUS, WriteFaultKind.COMMIT_THEN_DROP]
)
async def test_a_lost_answer_is_decided_by_reading_back_not_by_resending(
    sync: Sync, kind: WriteFaultKind
) -> None:
    portal, ids = await _fetched(sync)
    edits = {h: {"htmlTitle": f"title {h}"} for h in ids[:5]}
    changeset = await plant_changeset(sync.db, portal, PAGE, edits)
    sync.fake.set_write_faults((WriteFault(kind, content_type=PAGE, on_requests=(1,)),))

    await _push(sync, changeset.id)

    states = await item_states(sync.db, changeset.id)
    assert {s for s, _ in states.values()} == {"applied"}
    stats = sync.fake.write_stats(portal)
    # One batch write, committed, its answer lost: never sent a second time.
    assert stats.get("committed_live") == 5
    live = _live(sync, portal)
    assert all(live[h]["htmlTitle"] == f"title {h}" for h in edits)


async def test_a_207_fails_the_refused_input_and_applies_the_others(sync: Sync) -> None:
    portal, ids = await _fetched(sync)
    edits = {h: {"metaDescription": f"d {h}"} for h in ids[:4]}
    changeset = await plant_changeset(sync.db, portal, PAGE, edits)
    refused = ids[1]
    sync.fake.set_write_faults(
        (WriteFault(WriteFaultKind.REFUSE_INPUT, content_type=PAGE, object_id=refused),)
    )

    await _push(sync, changeset.id)

    states = await item_states(sync.db, changeset.id)
    assert states[refused][0] == "failed" and states[refused][1]
    assert all(states[h][0] == "applied" for h in edits if h != refused)


async def test_a_whole_batch_400_is_split_to_find_the_bad_input(sync: Sync) -> None:
    portal, ids = await _fetched(sync)
    edits = {h: {"htmlTitle": f"t {h}"} for h in ids[:8]}
    changeset = await plant_changeset(sync.db, portal, PAGE, edits)
    bad = ids[5]
    sync.fake.set_write_faults(
        (WriteFault(WriteFaultKind.REJECT_BATCH, content_type=PAGE, object_id=bad),)
    )

    await _push(sync, changeset.id)

    states = await item_states(sync.db, changeset.id)
    assert states[bad][0] == "failed"
    assert all(states[h][0] == "applied" for h in edits if h != bad)
    assert _live(sync, portal)[ids[0]]["htmlTitle"] == f"t {ids[0]}"


async def test_429s_wait_and_spend_no_attempt(sync: Sync) -> None:
    portal, ids = await _fetched(sync)
    changeset = await plant_changeset(sync.db, portal, PAGE, {ids[0]: {"htmlTitle": "x"}})
    sync.fake.set_write_faults(
        (WriteFault(WriteFaultKind.RATE_LIMIT, content_type=PAGE, on_requests=(1, 2)),)
    )

    run_id = await _push(sync, changeset.id)

    assert (await item_states(sync.db, changeset.id))[ids[0]][0] == "applied"
    assert sync.fake.write_stats(portal).get("fault_rate_limit") == 2
    [job] = await query(sync.db, "push_job_attempts", run_id=run_id)
    assert (job["status"], job["attempts"]) == ("completed", 1)


async def test_publish_draft_leaves_the_live_pages_alone(sync: Sync) -> None:
    portal, ids = await _fetched(sync)
    page = ids[0]
    before = _live(sync, portal)[page]["htmlTitle"]
    changeset = await plant_changeset(sync.db, portal, PAGE, {page: {"htmlTitle": "Draft"}})

    await _push(sync, changeset.id, publish="draft")

    assert (await item_states(sync.db, changeset.id))[page][0] == "applied"
    assert _live(sync, portal)[page]["htmlTitle"] == before
    log = sync.fake.write_log(portal)
    assert [e["op"] for e in log] == ["draft"]
