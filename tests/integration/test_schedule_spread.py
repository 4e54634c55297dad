"""Spread schedules: one cron expression for many portals fires each portal at its own stable
offset within SMUVES_SCHEDULE_SPREAD_SECONDS, still exactly once however many workers fire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from smuves_sync.cron import spread_offset
from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.models import ContentType
from smuves_sync.workers.scheduler import add_schedule, fire_due_schedules, remove_schedule
from tests.support import all_at_once, query
from tests.support.factories import Factory

T = datetime(2031, 1, 1, 12, 0, tzinfo=UTC)
NIGHT = datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
SPREAD = timedelta(minutes=10)


async def test_each_portal_gets_a_stable_time_within_the_window(
    factory: Factory, db: Database
) -> None:
    portals = [await factory.portal() for _ in range(20)]
    added = [await add_schedule(db, p, "0 3 * * *", now=T, spread=SPREAD) for p in portals]

    times = [s.next_run_at for s in added]
    assert all(t is not None and NIGHT <= t < NIGHT + SPREAD for t in times)
    assert len(set(times)) > 10  # spread out, not all in one second
    assert times == [NIGHT + spread_offset(p, SPREAD.total_seconds()) for p in portals]

    await remove_schedule(db, added[0].id)
    again = await add_schedule(db, portals[0], "0 3 * * *", now=T, spread=SPREAD)
    assert again.next_run_at == times[0]


async def test_spread_schedules_fire_each_exactly_once_across_workers(
    db_url: str, factory: Factory, db: Database
) -> None:
    portals = [await factory.portal() for _ in range(30)]
    for portal in portals:
        await add_schedule(db, portal, "0 3 * * *", [ContentType.SITE_PAGE], now=T, spread=SPREAD)
    offsets = {p: spread_offset(p, SPREAD.total_seconds()) for p in portals}
    halfway = NIGHT + SPREAD / 2
    early = sorted(p for p in portals if NIGHT + offsets[p] <= halfway)
    assert 0 < len(early) < len(portals)

    async def firing(at: datetime) -> list[int]:
        async with pool_for(db_url, role=DbRole.WORKER, min_size=8, max_size=8) as pool:
            worker = Database(pool)
            outcomes = await all_at_once(
                8, lambda: fire_due_schedules(worker, now=at, spread=SPREAD)
            )
        return sorted(f.run.portal_id for o in outcomes for f in o)

    assert await firing(NIGHT - timedelta(seconds=1)) == []
    assert await firing(halfway) == early
    assert await firing(halfway) == []
    assert await firing(NIGHT + SPREAD) == sorted(set(portals) - set(early))
    assert [r["n"] for r in await query(db, "opscheck_run_count")] == [30]

    # The next night: the same offset after the next cron time.
    rows = await query(db, "opscheck_schedules")
    assert {r["portal_id"]: r["next_run_at"] for r in rows} == {
        p: NIGHT + timedelta(days=1) + offsets[p] for p in portals
    }
