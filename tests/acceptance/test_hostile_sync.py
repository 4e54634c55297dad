"""Hostile and shifting HubSpot data end to end, all at once: a `smuves worker` subprocess syncs
a fake portal seeded with every poison object while people delete and create objects during
the listings (offset cursors that shift as HubSpot's do), one type's pages are malformed, and
a schedule that can never fire is due. The run ends with every storable object stored exactly
once and live, every object HubSpot deleted (and only those) marked deleted, every object that
cannot be stored in `content_rejects` with its reason, the run `partially_failed` for the
malformed type alone, and the worker still serving.

Everything is checked against the fake's ground truth, taken before and after the run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from smuves_sync.content_text import unescape_text, unescape_value
from smuves_sync.db import Database
from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeControl,
    FaultKind,
    FaultRule,
    Poison,
    PoisonKind,
    PortalSpec,
)
from smuves_sync.testing.fake_hubspot.spec import UNSTORABLE_POISONS
from tests.acceptance.conftest import ProcessSync, Spawn, stop
from tests.support import TOKEN, eventually, fake_portal, query, smuves, smuves_env

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

SITE, LANDING, POST = ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST
TABLE, ROW = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
# Every poison on the paged types, some on a page boundary (slot 99 ends the first page of
# live posts unless archived ones come before it), and the HubDB types too. No poison sits in
# the first slots, which the drift below deletes.
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
HOSTILE = fake_portal(8201, "260,250,230,3,120", seed=21, archived_share=0.1, poison=POISONS)
# Requests of a type count from 1: `smuves sync` counts it (live, archived), then the job lists.
# The second page of site pages and of posts is asked for after two objects of the first
# page were deleted and one (posts: three) created: two live objects cross the boundary
# unseen. Every landing page answer from the second page on is not JSON, on every attempt: a
# page, not an object, is broken, and only that type fails.
FAULTS = (
    FaultRule(FaultKind.DRIFT, on_requests=(4,), content_type=SITE, deleted=2, created=1),
    FaultRule(FaultKind.DRIFT, on_requests=(4,), content_type=POST, deleted=2, created=3),
    FaultRule(FaultKind.NOT_JSON, on_requests=tuple(range(4, 40)), content_type=LANDING),
)
CHECKED = (SITE, POST, TABLE, ROW)
# A schedule that parses but never fires, due since long ago by the database's clock.
NEVER = "0 0 31 2 *"
LONG_AGO = datetime.now(UTC) - timedelta(days=2)
Key = tuple[str, str]


@dataclass(frozen=True)
class Expected:
    """What a sync of one type must end with."""

    stored: Mapping[str, object]  # hubspot_id -> the document as HubSpot sent it (last copy)
    rejected: set[str]  # hubspot ids of the objects that cannot be stored
    rejected_without_id: int


def expected_store(fake: FakeControl, spec: PortalSpec, content_type: ContentType) -> Expected:
    """Every object the listings serve now, split into what must be stored and what rejected."""
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


def held(fake: FakeControl, portal: int) -> set[Key]:
    """(type, id) of every object HubSpot holds now, archived or not."""
    return {(str(t), item.hubspot_id) for t in ContentType for item in fake.ground_truth(portal, t)}


async def assert_stored_exactly(
    db: Database, fake: FakeControl, spec: PortalSpec, run_id: int, gone: set[Key]
) -> None:
    """Every storable object stored once, live, as HubSpot sent it, and none marked deleted;
    every unstorable one in content_rejects with its reason. Objects of `gone` (deleted in
    HubSpot after their page was read) may still be stored live: the next fetch confirms them
    gone."""
    portal = spec.portal_id
    stored = await query(db, "sync_content_of_portal", portal_id=portal)
    rejects = await query(db, "sync_rejects_of_portal", portal_id=portal)
    for content_type in CHECKED:
        expected = expected_store(fake, spec, content_type)
        rows = [r for r in stored if r["content_type"] == content_type.value]
        assert [r for r in rows if r["deleted_at"] is not None] == [], content_type
        ids = sorted(r["hubspot_id"] for r in rows)
        assert len(ids) == len(set(ids))
        stale = set(ids) - expected.stored.keys()
        assert expected.stored.keys() <= set(ids), content_type
        assert stale <= {i for t, i in gone if t == content_type.value}, content_type
        for row in (r for r in rows if r["hubspot_id"] not in stale):
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


async def run_settles(db: Database, portal: int, count: int) -> dict[str, Any]:
    """The portal's `count`-th run, once it is finished."""

    async def settled() -> bool:
        runs = await query(db, "sync_runs_of_portal", portal_id=portal)
        return len(runs) >= count and runs[count - 1]["status"] not in ("pending", "running")

    await eventually(settled, timeout=180)
    return (await query(db, "sync_runs_of_portal", portal_id=portal))[count - 1]


@pytest.mark.hubspot(HOSTILE, ten_second_limit=None, cursors="offset", faults=FAULTS)
async def test_a_worker_syncs_a_hostile_drifting_portal_losing_nothing_and_keeps_serving(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    fake, db, factory = sync.fake, sync.db, sync.factory
    portal = await sync.plant_portal()
    schedule_owner = await factory.user()
    haunted = await factory.portal(schedule_owner)
    never = await factory.schedule(
        haunted, owner=schedule_owner, cron_expression=NEVER, next_run_at=LONG_AGO
    )
    before = held(fake, portal)
    env = smuves_env(sync.db_url, sync.base_url)
    log = tmp_path / "worker.log"
    worker = await spawn(env, "worker", "--concurrency", "3", log=log)
    try:
        enqueued = await smuves(env, "sync", str(portal), "--no-wait")
        assert enqueued.code == 0, enqueued.stderr
        run = await run_settles(db, portal, 1)

        # The drift happened: objects went and came while the listings ran.
        after = held(fake, portal)
        gone = before - after
        assert {t for t, _ in gone} == {SITE.value, POST.value}
        assert {t for t, _ in after - before} == {SITE.value, POST.value}

        # Only the type whose pages were malformed failed, after its attempts, with the reason.
        assert run["status"] == "partially_failed", log.read_text()
        jobs = {
            j["content_type"]: j for j in await query(db, "sync_jobs_of_portal", portal_id=portal)
        }
        assert (jobs[LANDING.value]["status"], jobs[LANDING.value]["attempts"]) == ("failed", 3)
        assert "the body is not JSON" in jobs[LANDING.value]["last_error"]
        others = [j for t, j in jobs.items() if t != LANDING.value]
        assert [(j["status"], j["attempts"]) for j in others] == [("completed", 1)] * len(others)

        await assert_stored_exactly(db, fake, HOSTILE, run["id"], gone)
        # What the failed type did store is live and as HubSpot holds it; nothing of it deleted.
        landing = await sync.stored(portal, LANDING)
        assert landing and set(landing) <= set(sync.truth(portal, LANDING))
        assert await sync.stored(portal, LANDING, deleted=True) == []

        unstorable = [p for p in POISONS if p.kind in UNSTORABLE_POISONS]
        told = await query(db, "sync_notifications_of_run", run_id=run["id"])
        assert [n["kind"] for n in told] == ["run_partially_failed"]
        message = told[0]["message"]
        assert f"{len(unstorable)} objects could not be stored" in message, message
        assert "no usable 'id'" in message and "failed: landing_page" in message
        shown = await smuves(env, "run", str(run["id"]))
        assert f"{len(unstorable)} objects could not be stored" in shown.stdout

        # The schedule that never fires was turned off, its owner told; it started nothing.
        [schedule] = [s for s in await query(db, "opscheck_schedules") if s["id"] == never]
        assert schedule["enabled"] is False
        notes = await query(db, "opscheck_schedule_notifications")
        assert [(n["user_id"], n["kind"]) for n in notes] == [(schedule_owner, "schedule_disabled")]
        assert await query(db, "sync_runs_of_portal", portal_id=haunted) == []

        # The worker is still up, and it alone works the next sync to completion.
        assert worker.returncode is None, log.read_text()
        again = await smuves(env, "sync", str(portal), "--types", "blog_post", "--no-wait")
        assert again.code == 0, again.stderr
        second = await run_settles(db, portal, 2)
        assert second["status"] == "completed", log.read_text()
        # This fetch did not see the posts deleted during the first one's listing; HubSpot
        # confirms they are gone, and they, and only they, are marked deleted.
        posts = sorted(expected_store(fake, HOSTILE, POST).stored)
        assert [f[0] for f in await sync.stored(portal, POST)] == posts
        deleted = [f[0] for f in await sync.stored(portal, POST, deleted=True)]
        assert deleted == sorted(i for t, i in gone if t == POST.value)
        # A sync worked in this process (and the worker) says in its summary what was not
        # stored.
        third = await smuves(env, "sync", str(portal), "--types", "blog_post")
        assert third.code == 0, third.stdout + third.stderr
        assert "could not be stored" in third.stdout and "not stored" in third.stdout
        assert worker.returncode is None
    finally:
        code = await stop(worker)
    assert code == 0, log.read_text()


BALANCED = PortalSpec(portal_id=8202, token=TOKEN, seed=22, site_pages=260, archived_share=0.1)


@pytest.mark.hubspot(
    BALANCED,
    ten_second_limit=None,
    cursors="offset",
    faults=(FaultRule(FaultKind.DRIFT, on_requests=(4,), content_type=SITE, deleted=2, created=2),),
)
async def test_a_first_sync_misses_no_live_object_when_creations_balance_deletions(
    sync: ProcessSync,
) -> None:
    portal = await sync.plant_portal()
    env = smuves_env(sync.db_url, sync.base_url)
    result = await smuves(env, "sync", str(portal), "--types", "site_page")
    assert result.code == 0, result.stdout + result.stderr
    live = {f[0] for f in await sync.stored(portal, SITE)}
    assert {f[0] for f in sync.truth(portal, SITE)} <= live
