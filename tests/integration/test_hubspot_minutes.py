"""Workers write their HubSpot request counts per minute (workers/hubspot_minutes.py)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from smuves_sync import metrics
from smuves_sync.db import Database
from smuves_sync.db.hubspot_minutes import hubspot_per_minute
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule, PortalSpec
from smuves_sync.workers.hubspot_minutes import PROCESS_MINUTES, HubSpotMinutes
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync


async def recorded(db: Database) -> tuple[int, int]:
    """(requests, 429s) recorded over the last hour."""
    minutes = await hubspot_per_minute(db, minutes=60)
    return sum(m.requests for m in minutes), sum(m.rate_limited for m in minutes)


async def test_a_flush_writes_what_the_counters_gained_since_the_last(
    db: Database, worker_db: Database
) -> None:
    tally = HubSpotMinutes()
    for status in (200, 200, 429, None):
        metrics.hubspot_response(status)

    await tally.flush(worker_db)
    assert await recorded(db) == (4, 1)

    await tally.flush(worker_db)  # nothing new: nothing written
    metrics.hubspot_response(429)
    await tally.flush(worker_db)
    assert await recorded(db) == (5, 2)


class _Unreachable:
    """A database that is down."""

    async def execute(self, *_: Any) -> int:
        raise psycopg.OperationalError("server closed the connection")


async def test_counts_that_could_not_be_written_go_with_the_next_flush(
    db: Database, worker_db: Database
) -> None:
    tally = HubSpotMinutes()
    metrics.hubspot_response(200)
    with pytest.raises(psycopg.OperationalError):
        await tally.flush(_Unreachable())  # type: ignore[arg-type]
    metrics.hubspot_response(200)

    await tally.flush(worker_db)

    assert await recorded(db) == (2, 0)


SPEC = PortalSpec(portal_id=7301, token=TOKEN, seed=3, site_pages=450)


# Two injected 429s: the client waits them out and goes on.
@pytest.mark.hubspot(
    SPEC,
    ten_second_limit=None,
    faults=(FaultRule(FaultKind.RATE_LIMIT, on_requests=(2, 4), retry_after_s=0),),
)
async def test_a_runner_records_the_requests_of_its_fetches(sync: Sync) -> None:
    db, worker_db = sync.db, sync.worker_db
    # Whatever this process counted before belongs to other tests: write it off first.
    await PROCESS_MINUTES.flush(worker_db)
    before = await recorded(db)
    portal = await sync.plant_portal()
    await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    stats = await Runner(
        worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True
    ).run()

    assert stats.completed == 1
    served = sync.fake.stats(SPEC.portal_id)
    after = await recorded(db)
    assert served.status_429 == 2
    assert (after[0] - before[0], after[1] - before[1]) == (served.requests, 2)
