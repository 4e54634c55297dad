"""Hostile HubSpot data end to end: a `smuves worker` subprocess syncs a fake portal seeded with
every poison object, stores every storable object exactly once, quarantines the rest with
their reasons, completes the run, and keeps serving.

The portal, the poisons and what a sync must end with are built apart from the run itself
(`POISONED`, `expected_store`, `assert_stored_exactly`), so that listing drift (objects
created and deleted while the listing runs) can join the same portal and the same checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from smuves_sync.content_text import unescape_text, unescape_value
from smuves_sync.db import Database
from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeControl, Poison, PoisonKind, PortalSpec
from smuves_sync.testing.fake_hubspot.spec import UNSTORABLE_POISONS
from tests.acceptance.conftest import ProcessSync, Spawn, stop
from tests.support import TOKEN, eventually, query, smuves, smuves_env

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

SITE, POST = ContentType.SITE_PAGE, ContentType.BLOG_POST
TABLE, ROW = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
# Every poison on the paged types, some on a page boundary (slot 99 ends the first page of
# live posts unless archived ones come before it), and the HubDB types too.
POISONS = (
    *(Poison(kind, POST, slot=7 + 13 * n) for n, kind in enumerate(PoisonKind)),
    Poison(PoisonKind.NUMERIC_ID, POST, slot=99),
    Poison(PoisonKind.DUPLICATE_ID, POST, slot=100),
    *(Poison(kind, SITE, slot=150 + 11 * n) for n, kind in enumerate(PoisonKind)),
    Poison(PoisonKind.NUL_IN_NAME, TABLE, slot=0),
    Poison(PoisonKind.NO_ID, TABLE, slot=2),
    Poison(PoisonKind.LONE_SURROGATE, ROW, slot=3, table_slot=0),
    Poison(PoisonKind.NUMERIC_ID, ROW, slot=40, table_slot=1),
    Poison(PoisonKind.BAD_FIELD, ROW, slot=41, table_slot=1),
)
POISONED = PortalSpec(
    portal_id=8201,
    token=TOKEN,
    seed=21,
    site_pages=260,
    blog_posts=230,
    hubdb_tables=3,
    rows_per_table=120,
    archived_share=0.1,
    poison=POISONS,
)
TYPES = (SITE, POST, TABLE, ROW)


@dataclass(frozen=True)
class Expected:
    """What a sync of one type must end with."""

    stored: dict[str, object]  # hubspot_id -> the document as HubSpot sent it (last copy)
    rejected: set[str]  # hubspot ids of the objects that cannot be stored
    rejected_without_id: int


def expected_store(fake: FakeControl, spec: PortalSpec, content_type: ContentType) -> Expected:
    """Every object the listings serve, split into what must be stored and what rejected."""
    truth = fake.ground_truth(spec.portal_id, content_type, with_data=True)
    stored = {item.hubspot_id: item.data for item in truth}
    rejected: set[str] = set()
    without_id = 0
    for item in truth:
        data = item.data or {}
        if "id" not in data:
            without_id += 1
            del stored[item.hubspot_id]
        elif not isinstance(data.get("name", data.get("label", "")), str):
            rejected.add(item.hubspot_id)
            del stored[item.hubspot_id]
    if content_type is ROW:
        # The rows of a table that could not be stored are never listed (nothing to list by).
        tables = fake.ground_truth(spec.portal_id, TABLE, with_data=True)
        gone = {t.hubspot_id for t in tables if "id" not in (t.data or {})}
        stored = {k: v for k, v in stored.items() if k.split(":")[0] not in gone}
        rejected = {k for k in rejected if k.split(":")[0] not in gone}
    return Expected(stored, rejected, without_id)


async def assert_stored_exactly(
    db: Database, fake: FakeControl, spec: PortalSpec, portal: int, run_id: int
) -> None:
    """Every storable object stored once, live, as HubSpot sent it; every other one in
    content_rejects with its reason."""
    stored = await query(db, "sync_content_of_portal", portal_id=portal)
    rejects = await query(db, "sync_rejects_of_portal", portal_id=portal)
    for content_type in TYPES:
        expected = expected_store(fake, spec, content_type)
        rows = [r for r in stored if r["content_type"] == content_type.value]
        assert sorted(r["hubspot_id"] for r in rows) == sorted(expected.stored), content_type
        for row in rows:
            assert row["deleted_at"] is None
            assert unescape_value(row["data"]) == expected.stored[row["hubspot_id"]]
            document = expected.stored[row["hubspot_id"]]
            assert isinstance(document, dict)
            name = document.get("label") if content_type is TABLE else document.get("name")
            assert unescape_text(row["name"]) == name
        mine = [r for r in rejects if r["content_type"] == content_type.value]
        assert all(r["run_id"] == run_id and r["reason"] for r in mine)
        assert {r["hubspot_id"] for r in mine if r["hubspot_id"]} == expected.rejected
        assert sum(r["hubspot_id"] is None for r in mine) == expected.rejected_without_id
        for reject in mine:
            raw = json.loads(reject["raw"])  # the object as HubSpot sent it
            assert "id" not in raw or not isinstance(raw.get("name", raw.get("label")), str)


@pytest.mark.hubspot(POISONED, ten_second_limit=None)
async def test_a_worker_syncs_a_poisoned_portal_to_completion_and_keeps_serving(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    env = smuves_env(sync.db_url, sync.base_url)
    log = tmp_path / "worker.log"
    worker = await spawn(env, "worker", "--concurrency", "3", log=log)
    try:
        enqueued = await smuves(env, "sync", str(portal), "--no-wait")
        assert enqueued.code == 0, enqueued.stderr

        async def settled() -> bool:
            runs = await query(db, "sync_runs_of_portal", portal_id=portal)
            return bool(runs) and runs[0]["status"] not in ("pending", "running")

        await eventually(settled, timeout=120)
        [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
        assert run["status"] == "completed", log.read_text()
        jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
        assert [(j["status"], j["attempts"]) for j in jobs] == [("completed", 1)] * len(ContentType)
        # Every object HubSpot counted was listed once: an object listed twice counts once.
        assert [j["processed"] for j in jobs] == [j["total"] for j in jobs]
        await assert_stored_exactly(db, fake, POISONED, portal, run["id"])

        unstorable = [p for p in POISONS if p.kind in UNSTORABLE_POISONS]
        told = await query(db, "sync_notifications_of_run", run_id=run["id"])
        assert [n["kind"] for n in told] == ["run_completed"]
        message = told[0]["message"]
        assert f"{len(unstorable)} objects could not be stored" in message, message
        assert "no usable 'id'" in message
        shown = await smuves(env, "run", str(run["id"]))
        assert f"{len(unstorable)} objects could not be stored" in shown.stdout

        # The worker is still up and serving: another sync, worked by it and this process.
        assert worker.returncode is None, log.read_text()
        again = await smuves(env, "sync", str(portal), "--types", "blog_post")
        assert again.code == 0, again.stdout + again.stderr
        assert "could not be stored" in again.stdout and "not stored" in again.stdout
        assert worker.returncode is None
    finally:
        code = await stop(worker)
    assert code == 0, log.read_text()
