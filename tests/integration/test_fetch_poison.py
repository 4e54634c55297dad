"""Hostile objects: a fetch stores every object it can, quarantines the rest and completes; the
exports give back what HubSpot sent."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from smuves_sync.export_files import ExportFile, export_file_path
from smuves_sync.models import ContentType, ExportFormat, JobKind
from smuves_sync.orchestrator import start_export, start_fetch
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    FaultKind,
    FaultRule,
    Poison,
    PoisonKind,
)
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.support import Sync, fake_portal, query

POST, PAGE = ContentType.BLOG_POST, ContentType.SITE_PAGE
TABLE, ROW = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
SPEC = fake_portal(
    7101,
    "150,0,120,2,30",
    seed=6,
    archived_share=0.1,
    poison=(
        Poison(PoisonKind.NUL_IN_BODY, POST, 3),
        Poison(PoisonKind.NUL_IN_KEY, POST, 10),
        Poison(PoisonKind.DUPLICATE_ID, POST, 20),
        Poison(PoisonKind.NUL_IN_NAME, POST, 50),
        Poison(PoisonKind.NUMERIC_ID, POST, 60),
        Poison(PoisonKind.LONE_SURROGATE, POST, 99),
        Poison(PoisonKind.NO_ID, PAGE, 5),
        Poison(PoisonKind.LONE_SURROGATE, PAGE, 7),
        Poison(PoisonKind.NUMERIC_ID, PAGE, 99),
        Poison(PoisonKind.BAD_FIELD, PAGE, 120),
        Poison(PoisonKind.NUL_IN_NAME, TABLE, 1),
        Poison(PoisonKind.LONE_SURROGATE, ROW, 2, table_slot=0),
        Poison(PoisonKind.NUL_IN_BODY, ROW, 3, table_slot=1),
    ),
)
TYPES = [PAGE, POST, TABLE, ROW]


pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def unstorable_ids(fake: FakeHubSpot, content_type: ContentType) -> dict[str, PoisonKind]:
    """The ids of the objects of a type that cannot be stored, with their poison."""
    truth = fake.ground_truth(SPEC.portal_id, content_type)  # at version 0: slot order
    return {
        truth[p.slot].hubspot_id: p.kind
        for p in SPEC.poison
        if p.content_type is content_type and p.kind in (PoisonKind.NO_ID, PoisonKind.BAD_FIELD)
    }


async def test_a_fetch_stores_every_storable_object_once_and_quarantines_the_rest(
    sync: Sync, tmp_path: Path
) -> None:
    fake, db, worker_db = sync.fake, sync.db, sync.worker_db
    portal = await sync.plant_portal()
    started = await start_fetch(worker_db, portal, TYPES)
    settings = sync.settings_with(export_dir=tmp_path)

    await Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=2, burst=True).run()

    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("completed", 1)] * 4, jobs
    # An object listed twice in its page is counted once, as HubSpot counts it.
    assert [j["processed"] for j in jobs] == [j["total"] for j in jobs]
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert run["status"] == "completed"
    stored = await query(db, "sync_content_of_portal", portal_id=portal)
    for content_type in TYPES:
        truth = {t.hubspot_id for t in fake.ground_truth(SPEC.portal_id, content_type)}
        kept = [r["hubspot_id"] for r in stored if r["content_type"] == content_type.value]
        assert sorted(kept) == sorted(truth - set(unstorable_ids(fake, content_type)))
        assert all(r["deleted_at"] is None for r in stored)

    rejects = await query(db, "sync_rejects_of_portal", portal_id=portal)
    pages = fake.ground_truth(SPEC.portal_id, PAGE, with_data=True)
    assert [(r["run_id"], r["content_type"], r["hubspot_id"]) for r in rejects] == [
        (started.run.id, "site_page", None),
        (started.run.id, "site_page", pages[120].hubspot_id),
    ]
    assert "no usable 'id'" in rejects[0]["reason"]
    assert "'name' is int" in rejects[1]["reason"]
    assert json.loads(rejects[0]["raw"]) == pages[5].data  # the object as HubSpot sent it
    assert json.loads(rejects[1]["raw"])["name"] == 12345
    assert rejects[1]["raw_size"] == len(rejects[1]["raw"])
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_completed"]
    assert "2 objects could not be stored" in told[0]["message"]
    assert "no usable 'id'" in told[0]["message"] or "'name' is int" in told[0]["message"]

    # The exports give back exactly what HubSpot sent: JSON Lines as JSON escapes; CSV, which
    # a spreadsheet reads, with U+FFFD in place of each character text cannot hold.
    await start_export(db, portal, POST, ExportFormat.JSONL)
    await start_export(db, portal, PAGE, ExportFormat.CSV)
    await Runner(worker_db, settings, kinds=[JobKind.EXPORT], concurrency=2, burst=True).run()
    exports = {
        e["content_type"]: e for e in await query(db, "sync_exports_of_portal", portal_id=portal)
    }
    assert [e["status"] for e in exports.values()] == ["completed", "completed"]
    files = {
        t: export_file_path(
            settings.export_dir,
            ExportFile(portal, e["run_id"], ContentType(t), ExportFormat(e["format"])),
        )
        for t, e in exports.items()
    }
    lines = files["blog_post"].read_text(encoding="utf-8").splitlines()
    exported = {row["hubspot_id"]: row for row in map(json.loads, lines)}
    posts = fake.ground_truth(SPEC.portal_id, POST, with_data=True)
    assert exported.keys() == {t.hubspot_id for t in posts}
    for post in posts:
        assert exported[post.hubspot_id]["data"] == post.data, post.hubspot_id
        assert exported[post.hubspot_id]["name"] == (post.data or {})["name"]
    assert "\x00" in exported[posts[50].hubspot_id]["name"]
    assert exported[posts[60].hubspot_id]["data"]["id"] == int(posts[60].hubspot_id)
    assert "\ud800" in exported[posts[99].hubspot_id]["name"]
    with files["site_page"].open(encoding="utf-8", newline="") as stream:
        names = {row["hubspot_id"]: row["name"] for row in csv.DictReader(stream)}
    lone = (pages[7].data or {})["name"]
    assert names[pages[7].hubspot_id] == lone.replace("\ud800", "\ufffd")
    assert len(names) == len(pages) - 2


async def test_a_broken_page_is_still_retried_then_failed_with_its_reason(sync: Sync) -> None:
    db, worker_db = sync.db, sync.worker_db
    # Not one object but the whole answer is broken: that page cannot be read at all.
    sync.fake.set_faults((FaultRule(FaultKind.NOT_JSON, share=1.0, content_type=PAGE),))
    portal = await sync.plant_portal()
    started = await start_fetch(worker_db, portal, [PAGE, POST])
    settings = sync.settings

    await Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=2,
        until=settled(worker_db, portal, started.run.id),
    ).run()

    jobs = {j["content_type"]: j for j in await query(db, "sync_jobs_of_portal", portal_id=portal)}
    assert (jobs["site_page"]["status"], jobs["site_page"]["attempts"]) == ("failed", 3)
    assert "the body is not JSON" in jobs["site_page"]["last_error"]
    assert (jobs["blog_post"]["status"], jobs["blog_post"]["attempts"]) == ("completed", 1)
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert run["status"] == "partially_failed"
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_partially_failed"]
    assert "failed: site_page" in told[0]["message"]
    assert "wrong shape; it was given up after 3 attempts" in told[0]["message"]
    assert "could not be stored" not in told[0]["message"]  # every post could be
