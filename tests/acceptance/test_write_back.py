"""Write-back end to end: export for editing, edit ~30 % of the rows, import, preview, push
through 429 bursts, writes that commit and then lose their answer, a worker SIGKILLed mid-push
and people editing the same objects, then a rollback.

Every non-conflicting edit is live in the fake, every person's edit is intact, the conflicts
are exactly the objects whose changed field a person edited, the store equals the fake, an
untouched export of the result imports as zero changes, and the rollback restores every pushed
field except those people changed since.
"""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.push_start import start_push
from smuves_sync.testing.fake_hubspot import PortalSpec, WriteFault, WriteFaultKind
from smuves_sync.workers.runner import Runner
from tests.acceptance.conftest import ProcessSync, Spawn, stop
from tests.support import TOKEN, eventually, query, smuves
from tests.support.push import item_states

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

PAGE, ROW = ContentType.SITE_PAGE, ContentType.HUBDB_ROW
PORTAL = 8301
SPEC = PortalSpec(portal_id=PORTAL, token=TOKEN, seed=11, site_pages=300, landing_pages=0,
                  blog_posts=0, hubdb_tables=2, rows_per_table=30, archived_share=0.0)  # fmt: skip
FIELDS = {PAGE: "htmlTitle,metaDescription,slug", ROW: "values.title,name"}


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _edit(rows: list[dict[str, str]], content_type: ContentType) -> dict[str, dict[str, str]]:
    """Change about 30 % of the rows (every third one, and then some); what was changed."""
    changed: dict[str, dict[str, str]] = {}
    for n, row in enumerate(rows):
        if n % 10 not in (0, 3, 7):
            continue
        h = row["hubspot_id"]
        if content_type is PAGE:
            new = {"htmlTitle": f"Title {h} v2", "metaDescription": f"About {h}"}
            if n % 20 == 0:
                new["slug"] = f"moved-{h}"
        else:
            new = {"values.title": f"Cell {h}"}
        row.update(new)
        changed[h] = new
    return changed


async def _export(sync: ProcessSync, env: dict[str, str], kind: ContentType, out: Path) -> None:
    args = ["export", str(PORTAL), "--type", str(kind), "--format", "csv", "--edit"]
    result = await smuves(env, *args, "--fields", FIELDS[kind], "--out", str(out))
    assert result.code == 0, result.stdout + result.stderr


async def _import(env: dict[str, str], path: Path, kind: ContentType) -> dict[str, Any]:
    args = ["changeset", "import", str(PORTAL), str(path), "--type", str(kind), "--json"]
    result = await smuves(env, *args)
    assert result.code == 0, result.stdout + result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _live(sync: ProcessSync, kind: ContentType) -> dict[str, dict[str, Any]]:
    return {
        t.hubspot_id: t.data or {} for t in sync.fake.ground_truth(PORTAL, kind, with_data=True)
    }


def _value(obj: dict[str, Any], key: str) -> Any:
    if key.startswith("values."):
        return (obj.get("values") or {}).get(key[len("values.") :])
    return obj.get(key)


async def _push_with_a_crash(
    sync: ProcessSync, spawn: Spawn, env: dict[str, str], changesets: list[int], tmp: Path
) -> None:
    """Push the changesets at once (the first with the CLI, the other as the API would start
    it); SIGKILL the worker pushing them once an intent is committed, and let another finish."""
    first_id, *others = changesets
    pushed = await smuves(env, "changeset", "push", str(first_id), "--no-wait", "--json")
    assert pushed.code == 0, pushed.stdout + pushed.stderr
    for changeset in others:
        await start_push(sync.db, changeset)
    await query(sync.db, "set_job_lease", kind="push", lease=timedelta(seconds=2))
    first = await spawn(env, "worker", "--kinds", "push", log=tmp / "first.log")

    async def an_intent_committed() -> bool:
        return bool(await query(sync.db, "push_intents_of_changeset", changeset_id=first_id))

    await eventually(an_intent_committed, timeout=30)
    first.kill()  # SIGKILL mid-push: its intents stay open, its lease runs out
    await first.wait()
    second = await spawn(env, "worker", "--kinds", "push", log=tmp / "second.log")
    try:

        async def settled() -> bool:
            for changeset in changesets:
                states = await item_states(sync.db, changeset)
                if any(state == "pending" for state, _ in states.values()):
                    return False
            return True

        await eventually(settled, timeout=60)
    finally:
        assert await stop(second) == 0, (tmp / "second.log").read_text()


@pytest.mark.hubspot(SPEC, latency_ms=20)
async def test_a_content_teams_round_trip_survives_hubspot_and_its_people(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    portal = await sync.plant_portal()
    await start_fetch(sync.db, portal, [ContentType.HUBDB_TABLE, PAGE, ROW])
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=3, burst=True
    ).run()
    env = sync.env()
    pages_csv, rows_csv = tmp_path / "pages.csv", tmp_path / "rows.csv"
    await _export(sync, env, PAGE, pages_csv)
    await _export(sync, env, ROW, rows_csv)
    pages, rows = _read(pages_csv), _read(rows_csv)
    original = {r["hubspot_id"]: dict(r) for r in pages}
    page_edits, row_edits = _edit(pages, PAGE), _edit(rows, ROW)
    _write(pages_csv, pages)
    _write(rows_csv, rows)
    assert 0.25 <= len(page_edits) / len(pages) <= 0.35

    imported = await _import(env, pages_csv, PAGE)
    assert imported["counts"] == {
        "changed": len(page_edits),
        "unchanged": len(pages) - len(page_edits),
        "invalid": 0,
    }
    preview = await smuves(env, "changeset", "show", str(imported["changeset"]), "--json")
    assert preview.code == 0 and len(json.loads(preview.stdout)["items"]) == len(pages)
    row_import = await _import(env, rows_csv, ROW)
    assert row_import["counts"]["changed"] == len(row_edits)

    # People edit 3 % of the edited pages before the push: half of them the very field the
    # changeset changes (a conflict), half another one (rebased and written).
    people = sorted(page_edits)[:: max(1, len(page_edits) // 6)][:6]
    same, other = people[::2], people[1::2]
    for h in same:
        sync.fake.person_edit(PORTAL, PAGE, h, {"htmlTitle": f"Person's title {h}"})
    for h in other:
        sync.fake.person_edit(PORTAL, PAGE, h, {"name": f"Person's name {h}"})
    sync.fake.set_write_faults(
        (
            WriteFault(WriteFaultKind.RATE_LIMIT, share=0.3),
            WriteFault(WriteFaultKind.COMMIT_THEN_DROP, content_type=PAGE, on_requests=(1,)),
            WriteFault(WriteFaultKind.COMMIT_THEN_STATUS, share=0.02),
            # People keep editing, between the push's read and its write (a field no
            # changeset edits: the write must leave it alone).
            WriteFault(WriteFaultKind.EDIT_AFTER_READ, content_type=PAGE, object_share=0.03),
        )
    )
    changesets = [imported["changeset"], row_import["changeset"]]
    await _push_with_a_crash(sync, spawn, env, changesets, tmp_path)
    sync.fake.set_write_faults(())

    page_states = await item_states(sync.db, imported["changeset"])
    conflicts = {h for h, (state, _) in page_states.items() if state == "conflict"}
    # The conflicts: the pages whose changed field a person edited, and perhaps one whose write
    # the killed worker may have sent, which a person edited (another field) before it was
    # read back: not sent again, since nothing says whose edit came last.
    edited_after_read = {e["id"] for e in sync.fake.write_log(PORTAL) if e["op"] == "person"}
    assert set(same) <= conflicts <= set(same) | edited_after_read
    assert all("not sent again" in (page_states[h][1] or "") for h in conflicts - set(same))
    assert {s for h, (s, _) in page_states.items() if h in page_edits and h not in conflicts} == {
        "applied"
    }
    row_states = await item_states(sync.db, row_import["changeset"])
    assert {row_states[h][0] for h in row_edits} == {"applied"}
    live_pages, live_rows = _live(sync, PAGE), _live(sync, ROW)
    for edits, live in ((page_edits, live_pages), (row_edits, live_rows)):
        for h, fields in edits.items():
            if h not in conflicts:
                assert {k: _value(live[h], k) for k in fields} == fields, h
    assert all(live_pages[h]["htmlTitle"] == f"Person's title {h}" for h in same)
    assert all(live_pages[h]["name"] == f"Person's name {h}" for h in other)
    for entry in sync.fake.write_log(PORTAL):
        if entry["op"] == "person" and entry["keys"] == ["headHtml"]:
            assert "(edited)" in str(live_pages[entry["id"]]["headHtml"]), entry
    assert await sync.stored(portal, PAGE) == sync.truth(portal, PAGE)
    assert await sync.stored(portal, ROW) == sync.truth(portal, ROW)

    again = tmp_path / "again.csv"
    await _export(sync, env, PAGE, again)
    assert (await _import(env, again, PAGE))["counts"]["changed"] == 0

    # A person changes two pushed titles; the rollback puts back every other pushed field.
    applied = sorted(h for h in page_edits if h not in conflicts)
    later = applied[:2]
    for h in later:
        sync.fake.person_edit(PORTAL, PAGE, h, {"htmlTitle": f"Later {h}"})
    rolled = await smuves(env, "changeset", "rollback", str(imported["changeset"]), "--json")
    assert rolled.code == 0, rolled.stdout + rolled.stderr
    rollback = json.loads(rolled.stdout)["changeset"]
    pushed = await smuves(env, "changeset", "push", str(rollback), "--json")
    assert pushed.code == 1, pushed.stdout + pushed.stderr  # the two conflicts
    after = _live(sync, PAGE)
    states = await item_states(sync.db, rollback)
    assert {h for h, (s, _) in states.items() if s == "conflict"} == set(later)
    assert all(after[h]["htmlTitle"] == f"Later {h}" for h in later)
    for h in applied[2:]:
        fields = page_edits[h]
        assert {k: str(_value(after[h], k)) for k in fields} == {
            k: original[h][k] for k in fields
        }, h
