"""Content history end to end: `smuves sync`, the fake HubSpot changes authors, tags,
redirects and posts, `smuves sync` again; `smuves changes` lists exactly what the fake
changed, and `smuves diff` shows the fields that changed."""

from __future__ import annotations

import csv
import io
import json

import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, FakeControl, TruthItem
from tests.acceptance.conftest import ProcessSync
from tests.support import fake_portal, query, smuves

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

PORTAL = fake_portal(8101, "120,0,300,2,30,40,60,50,4", seed=11, archived_share=0.1)
MUTATED = (
    ContentType.BLOG_AUTHOR,
    ContentType.BLOG_TAG,
    ContentType.URL_REDIRECT,
    ContentType.BLOG_POST,
)
CHURN = Churn(changed=0.1, deleted=0.05, added=0.05, archived=0.05, unarchived=0.5, types=MUTATED)

Snapshot = dict[ContentType, dict[str, TruthItem]]


def snapshot(fake: FakeControl) -> Snapshot:
    """What the fake serves now, every type, with the documents."""
    return {
        t: {i.hubspot_id: i for i in fake.ground_truth(PORTAL.portal_id, t, with_data=True)}
        for t in ContentType
    }


def mutations(before: Snapshot, after: Snapshot) -> set[tuple[str, str, str]]:
    """(type, id, event) of every object the fake changed between the two snapshots."""
    found = set()
    for content_type, old in before.items():
        new = after[content_type]
        found |= {(content_type.value, i, "created") for i in new.keys() - old.keys()}
        found |= {(content_type.value, i, "deleted") for i in old.keys() - new.keys()}
        for i in old.keys() & new.keys():
            if new[i].archived and not old[i].archived:
                found.add((content_type.value, i, "archived"))
            elif old[i].archived and not new[i].archived:
                found.add((content_type.value, i, "unarchived"))
            elif new[i].data != old[i].data:
                found.add((content_type.value, i, "updated"))
    return found


@pytest.mark.hubspot(PORTAL, ten_second_limit=None)
async def test_changes_list_exactly_what_the_fake_changed_and_diff_shows_the_fields(
    sync: ProcessSync,
) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    env = sync.env()
    first = await smuves(env, "sync", str(portal))
    assert first.code == 0, first.stderr
    before = snapshot(fake)

    fake.advance(PORTAL.portal_id, CHURN)
    after = snapshot(fake)
    second = await smuves(env, "sync", str(portal))
    assert second.code == 0, second.stderr

    runs = await query(sync.db, "sync_runs_of_portal", portal_id=portal)
    second_run = max(r["id"] for r in runs)
    listed = await smuves(env, "changes", str(portal), "--since-run", str(second_run))
    assert listed.code == 0, listed.stderr
    rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    expected = mutations(before, after)
    assert {e for _, _, e in expected} == {
        "created",
        "updated",
        "archived",
        "unarchived",
        "deleted",
    }
    assert {t for t, _, _ in expected} == {t.value for t in MUTATED}
    assert len(rows) == len(expected)
    assert {(r["content_type"], r["hubspot_id"], r["event"]) for r in rows} == expected
    assert {r["run_id"] for r in rows} == {str(second_run)}

    as_json = await smuves(
        env, "changes", str(portal), "--since-run", str(second_run), "--format", "jsonl"
    )
    assert len(as_json.stdout.splitlines()) == len(expected)

    # Every edited post: the diff names exactly the fields the fake changed.
    posts = ContentType.BLOG_POST
    edited = sorted(i for t, i, e in expected if t == posts.value and e == "updated")
    assert edited
    for hubspot_id in edited[:5]:
        old, new = before[posts][hubspot_id].data, after[posts][hubspot_id].data
        assert old is not None and new is not None
        changed = {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
        shown = await smuves(env, "diff", str(portal), posts.value, hubspot_id, "--json")
        assert shown.code == 0, shown.stderr
        diff = json.loads(shown.stdout)
        assert (diff["from"]["version"], diff["to"]["version"]) == (1, 2)
        paths = {c["path"].removeprefix("$.").split(".")[0].split("[")[0] for c in diff["changes"]}
        assert paths == changed
        text = await smuves(env, "diff", str(portal), posts.value, hubspot_id)
        assert "~ $.postBody:" in text.stdout and "    --- version 1" in text.stdout
