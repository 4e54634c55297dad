"""Schedules: validation on the way in, and firing each due schedule exactly once."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from smuves_sync.db import Database, DbRole, Pool, pool_for
from smuves_sync.db.notifications import notification_page
from smuves_sync.db.schedules import schedule_claim_due, schedule_disable
from smuves_sync.errors import (
    DatabaseUnavailable,
    InvalidCronExpression,
    NotFound,
    UnknownContentType,
)
from smuves_sync.models import ContentType, JobStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.workers.scheduler import (
    add_schedule,
    fire_due_schedules,
    list_schedules,
    remove_schedule,
)
from tests.support import all_at_once, query
from tests.support.factories import Factory

ALL = tuple(ContentType)
# Injected clock, far from the real one: what is due is decided by it alone.
T = datetime(2031, 1, 1, 12, 0, tzinfo=UTC)


async def _schedules(db: Database) -> list[dict[str, object]]:
    return await query(db, "opscheck_schedules")


async def _runs(db: Database, portal: int) -> list[dict[str, object]]:
    return await query(db, "opscheck_runs_of_portal", portal_id=portal)


# -- adding, listing, removing -------------------------------------------------------------


async def test_add_sets_the_next_firing_in_utc(factory: Factory, db: Database) -> None:
    portal = await factory.portal()

    nightly = await add_schedule(db, portal, "0  3 * * *", now=T)
    some = await add_schedule(db, portal, "*/15 * * * *", ["blog_post", "site_page"], now=T)

    assert (nightly.cron_expression, nightly.content_types) == ("0 3 * * *", ALL)
    assert nightly.next_run_at == datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
    assert nightly.enabled and nightly.last_run_at is None
    assert some.content_types == (ContentType.SITE_PAGE, ContentType.BLOG_POST)
    assert some.next_run_at == datetime(2031, 1, 1, 12, 15, tzinfo=UTC)
    assert [s.id for s in await list_schedules(db)] == [nightly.id, some.id]


@pytest.mark.parametrize(
    ("cron", "types", "error", "message"),
    [
        ("every night", None, InvalidCronExpression, "expected 5 fields"),
        ("61 3 * * *", None, InvalidCronExpression, "invalid cron expression '61 3"),
        ("0 3 * * * *", None, InvalidCronExpression, "expected 5 fields"),
        ("0 3 * * *", ["blog_posts"], UnknownContentType, "unknown content type 'blog_posts'"),
        ("0 0 31 2 *", None, InvalidCronExpression, "'0 0 31 2 \\*': it never fires"),
        ("0 0 30 2 *", None, InvalidCronExpression, "within 5 years of 2031-01-01"),
    ],
)
async def test_bad_input_is_refused_and_changes_nothing(
    factory: Factory,
    db: Database,
    cron: str,
    types: list[str] | None,
    error: type[Exception],
    message: str,
) -> None:
    portal = await factory.portal()
    with pytest.raises(error, match=message):
        await add_schedule(db, portal, cron, types, now=T)
    assert await _schedules(db) == []


async def test_an_unknown_portal_is_refused(db: Database) -> None:
    with pytest.raises(NotFound, match="portal 424242 is not known"):
        await add_schedule(db, 424242, "0 3 * * *", now=T)
    assert await _schedules(db) == []


async def test_list_by_portal_and_remove(factory: Factory, db: Database) -> None:
    a, b = await factory.portal(), await factory.portal()
    sa = await add_schedule(db, a, "0 3 * * *", now=T)
    sb = await add_schedule(db, b, "0 4 * * *", now=T)

    assert [s.id for s in await list_schedules(db, portal_id=b)] == [sb.id]
    removed = await remove_schedule(db, sa.id)

    assert removed.id == sa.id
    assert [s["id"] for s in await _schedules(db)] == [sb.id]
    with pytest.raises(NotFound, match=f"schedule {sa.id} not found"):
        await remove_schedule(db, sa.id)


# -- firing --------------------------------------------------------------------------------


async def test_a_due_schedule_fires_once_and_moves_on(factory: Factory, db: Database) -> None:
    owner = await factory.user()
    portal = await factory.portal(owner)
    schedule = await factory.schedule(
        portal,
        owner=owner,
        cron_expression="0 3 * * *",
        content_types=[ContentType.BLOG_POST, ContentType.HUBDB_TABLE],
        next_run_at=T - timedelta(minutes=1),
    )

    [fired] = await fire_due_schedules(db, now=T)
    again = await fire_due_schedules(db, now=T)

    assert again == []
    assert fired.run.portal_id == portal and fired.run.owner_id == owner
    assert [j.content_type for j in fired.jobs] == [ContentType.BLOG_POST, ContentType.HUBDB_TABLE]
    assert all(j.status is JobStatus.PENDING for j in fired.jobs)
    assert [r["id"] for r in await _runs(db, portal)] == [fired.run.id]
    [row] = await _schedules(db)
    assert row["id"] == schedule
    assert row["next_run_at"] == datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
    assert row["last_run_at"] == T


async def test_schedules_not_due_or_disabled_do_not_fire(factory: Factory, db: Database) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, next_run_at=T + timedelta(seconds=1))
    disabled = await add_schedule(db, portal, "* * * * *", now=T - timedelta(hours=1))
    assert await schedule_disable(db, disabled.id)

    assert await fire_due_schedules(db, now=T) == []
    assert await _runs(db, portal) == []


async def test_a_long_missed_schedule_fires_once_not_once_per_slot(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, cron_expression="0 * * * *", next_run_at=T - timedelta(days=3))

    fired = await fire_due_schedules(db, now=T + timedelta(minutes=5))

    assert len(fired) == 1
    [row] = await _schedules(db)
    assert row["next_run_at"] == T + timedelta(hours=1)


async def test_every_type_in_flight_skips_the_firing_but_still_advances(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    manual = await start_fetch(db, portal)
    await factory.schedule(portal, next_run_at=T)

    assert await fire_due_schedules(db, now=T) == []

    assert [r["id"] for r in await _runs(db, portal)] == [manual.run.id]
    [row] = await _schedules(db)
    assert row["next_run_at"] == datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
    assert row["last_run_at"] is None


async def test_a_partial_overlap_fetches_only_the_free_types(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    manual = await start_fetch(db, portal, [ContentType.SITE_PAGE])
    await factory.schedule(portal, next_run_at=T)

    [fired] = await fire_due_schedules(db, now=T)

    assert [j.content_type for j in fired.jobs] == list(ALL[1:])
    assert dict(fired.skipped) == {ContentType.SITE_PAGE: manual.run.id}


async def test_a_schedule_without_a_next_time_gets_one_without_firing(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, cron_expression="30 2 * * *", next_run_at=None)

    assert await fire_due_schedules(db, now=T) == []

    [row] = await _schedules(db)
    assert row["next_run_at"] == datetime(2031, 1, 2, 2, 30, tzinfo=UTC)
    assert await _runs(db, portal) == []


async def test_a_schedule_with_a_broken_expression_is_disabled(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, cron_expression="at noon", next_run_at=T)
    good = await factory.portal()
    await factory.schedule(good, next_run_at=T)

    fired = await fire_due_schedules(db, now=T)

    assert [f.run.portal_id for f in fired] == [good]
    rows = await _schedules(db)
    assert [(r["portal_id"], r["enabled"]) for r in rows] == [(portal, False), (good, True)]
    assert await _runs(db, portal) == []


async def test_a_planted_schedule_that_never_fires_is_disabled_and_the_others_fire(
    factory: Factory, db: Database, worker_db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    # Written past `schedule add`, and first in line (the oldest due).
    bad_portal = await factory.portal()
    bad = await factory.schedule(
        bad_portal, cron_expression="0 0 31 2 *", next_run_at=T - timedelta(days=1)
    )
    good = await factory.portal()
    await factory.schedule(good, next_run_at=T)
    caplog.set_level(logging.INFO, logger="smuves_sync.workers.scheduler")

    fired = await fire_due_schedules(worker_db, now=T)

    assert [f.run.portal_id for f in fired] == [good]
    rows = await _schedules(db)
    assert [(r["id"], r["enabled"]) for r in rows] == [(bad, False), (rows[1]["id"], True)]
    assert await _runs(db, bad_portal) == []
    [said] = [r for r in caplog.records if f"schedule {bad} " in r.getMessage()]
    assert said.levelno == logging.ERROR
    assert "disabled" in said.getMessage() and "it never fires" in said.getMessage()
    # Disabled, it is not claimed again.
    assert await fire_due_schedules(worker_db, now=T + timedelta(days=1)) == []


async def test_a_schedule_disabled_at_fire_time_tells_its_owner(
    factory: Factory, db: Database, worker_db: Database, app_pool: Pool
) -> None:
    # One schedule with an owner of its own, one without (a schedule of the portal's owner).
    portal_owner, schedule_owner = await factory.user(), await factory.user()
    portal = await factory.portal(portal_owner, members=[schedule_owner])
    owned = await factory.schedule(
        portal, owner=schedule_owner, cron_expression="0 0 31 2 *", next_run_at=T
    )
    other = await factory.portal(portal_owner)
    ownerless = await factory.schedule(other, cron_expression="at noon", next_run_at=T)

    assert await fire_due_schedules(worker_db, now=T) == []

    told = await query(db, "opscheck_schedule_notifications")
    assert [(n["user_id"], n["run_id"], n["kind"]) for n in told] == [
        (schedule_owner, None, "schedule_disabled"),
        (portal_owner, None, "schedule_disabled"),
    ]
    assert f"Schedule {owned} of portal {portal} ('0 0 31 2 *')" in told[0]["message"]
    assert "it never fires" in told[0]["message"]
    assert "smuves schedule add" in told[0]["message"]
    assert f"Schedule {ownerless} of portal {other} ('at noon')" in told[1]["message"]
    # The owner reads it with the rest of their notifications, naming the schedule.
    async with Database(app_pool).as_user(schedule_owner) as scoped:
        page = await notification_page(scoped, before=None, limit=10)
    assert [(n.kind, n.schedule_id, n.run_id) for n in page.items] == [
        ("schedule_disabled", owned, None)
    ]


async def test_a_firing_that_fails_unforeseen_is_rolled_back_and_disables_its_schedule(
    factory: Factory,
    db: Database,
    worker_db: Database,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cursed = await factory.portal()
    bad = await factory.schedule(cursed, next_run_at=T - timedelta(minutes=1))
    good = await factory.portal()
    await factory.schedule(good, next_run_at=T)

    async def start_then_trip(tx: Database, portal_id: int, *args: Any, **kw: Any) -> object:
        started = await start_fetch(tx, portal_id, *args, **kw)
        if portal_id == cursed:
            raise KeyError("a value this code never met")
        return started

    monkeypatch.setattr("smuves_sync.workers.scheduler.start_fetch", start_then_trip)
    caplog.set_level(logging.INFO, logger="smuves_sync.workers.scheduler")

    fired = await fire_due_schedules(worker_db, now=T)

    assert [f.run.portal_id for f in fired] == [good]
    # The failed firing's run was rolled back with it; its schedule is off.
    assert await _runs(db, cursed) == []
    assert [(r["portal_id"], r["enabled"]) for r in await _schedules(db)] == [
        (cursed, False),
        (good, True),
    ]
    said = [r.getMessage() for r in caplog.records if f"schedule {bad} " in r.getMessage()]
    assert any("disabled" in m and "KeyError" in m for m in said)


async def test_database_trouble_while_firing_leaves_the_schedule_enabled_and_due(
    factory: Factory, db: Database, worker_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, next_run_at=T)

    async def connection_lost(*args: object, **kw: object) -> object:
        raise DatabaseUnavailable("server closed the connection unexpectedly")

    monkeypatch.setattr("smuves_sync.workers.scheduler.start_fetch", connection_lost)
    with pytest.raises(DatabaseUnavailable):
        await fire_due_schedules(worker_db, now=T)
    monkeypatch.undo()

    [row] = await _schedules(db)
    assert (row["enabled"], row["next_run_at"]) == (True, T)
    [fired] = await fire_due_schedules(worker_db, now=T)
    assert fired.run.portal_id == portal


async def test_the_worker_role_fires_schedules_of_every_portal(
    factory: Factory, db: Database, worker_db: Database
) -> None:
    portals = [await factory.portal() for _ in range(3)]
    for portal in portals:
        await factory.schedule(portal, next_run_at=T)

    fired = await fire_due_schedules(worker_db, now=T, max_attempts=5)

    assert sorted(f.run.portal_id for f in fired) == sorted(portals)
    assert {j.max_attempts for f in fired for j in f.jobs} == {5}
    assert all(r["last_run_at"] == T for r in await _schedules(db))


async def test_a_schedule_being_fired_elsewhere_is_skipped_not_waited_for(
    factory: Factory, db: Database, worker_db: Database
) -> None:
    portal = await factory.portal()
    await factory.schedule(portal, next_run_at=T)

    async with db.transaction() as holder:
        assert await schedule_claim_due(holder, now=T) is not None
        # SKIP LOCKED: the locked row is passed over at once.
        assert await fire_due_schedules(worker_db, now=T) == []
    # The holder ended without firing: the schedule is still due, and fires now.
    [fired] = await fire_due_schedules(worker_db, now=T)
    assert fired.run.portal_id == portal


async def test_twenty_concurrent_firings_start_exactly_one_run(
    db_url: str, factory: Factory, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    portal = await factory.portal()
    schedule = await factory.schedule(portal, next_run_at=T)
    caplog.set_level(logging.INFO, logger="smuves_sync.workers.scheduler")
    async with pool_for(db_url, role=DbRole.WORKER, min_size=20, max_size=20) as pool:
        worker = Database(pool)
        outcomes = await all_at_once(20, lambda: fire_due_schedules(worker, now=T))

    assert sorted(len(o) for o in outcomes) == [0] * 19 + [1]
    assert len(await _runs(db, portal)) == 1
    # The run's dedup would also turn a second firing into one run; the lock must mean that
    # no other firer even tried.
    tries = [r.getMessage() for r in caplog.records if f"schedule {schedule} " in r.getMessage()]
    assert len(tries) == 1 and "started run" in tries[0]


async def test_many_firers_and_many_schedules_fire_each_exactly_once(
    db_url: str, factory: Factory, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smuves_sync.workers.scheduler")
    portals = [await factory.portal() for _ in range(30)]
    for portal in portals:
        await factory.schedule(portal, content_types=[ContentType.SITE_PAGE], next_run_at=T)
    async with pool_for(db_url, role=DbRole.WORKER, min_size=8, max_size=8) as pool:
        worker = Database(pool)
        outcomes = await all_at_once(8, lambda: fire_due_schedules(worker, now=T))

    fired_portals = [f.run.portal_id for o in outcomes for f in o]
    assert sorted(fired_portals) == sorted(portals)
    assert [r["n"] for r in await query(db, "opscheck_run_count")] == [30]
    assert [r for r in caplog.records if "skipped this firing" in r.getMessage()] == []
