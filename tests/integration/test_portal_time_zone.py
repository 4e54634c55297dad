"""HubSpot's DAILY limit resets at midnight in the portal's own time zone, not UTC's.

The zone is what HubSpot's account details said when the portal was connected (stored on the
portal); the fetch that hits the daily limit parks until that midnight.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get
from smuves_sync.hubspot.limit_headers import next_midnight
from smuves_sync.models import ContentType, JobKind, JobStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    FaultKind,
    FaultRule,
    PortalSpec,
    ServerConfig,
    serve_in_thread,
)
from smuves_sync.workers.runner import Runner
from tests.support.factories import Factory
from tests.support.sync import TOKEN, plant_portal, sync_settings

# Twelve or thirteen hours ahead of UTC: its midnight is never UTC's.
ZONE = "Pacific/Auckland"
SPEC = PortalSpec(portal_id=7101, token=TOKEN, seed=5, site_pages=150, time_zone=ZONE)


@pytest.fixture
def base_url() -> Iterator[str]:
    daily = FaultRule(
        FaultKind.RATE_LIMIT, policy="DAILY", on_requests=(3,), content_type=ContentType.SITE_PAGE
    )
    fake = FakeHubSpot([SPEC], ServerConfig(ten_second_limit=None, faults=(daily,)))
    with serve_in_thread(fake) as url:
        yield url


async def test_a_spent_daily_limit_parks_until_midnight_in_the_portals_zone(
    base_url: str, factory: Factory, worker_db: Database, db: Database, db_url: str
) -> None:
    portal = await plant_portal(factory, SPEC)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    before = next_midnight(datetime.now(UTC), ZoneInfo(ZONE))

    settings = sync_settings(db_url, base_url)
    runner = Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=1, burst=True)
    await runner.run()

    after = next_midnight(datetime.now(UTC), ZoneInfo(ZONE))
    job = await job_get(db, started.jobs[0].id)
    assert job is not None and runner.stats.parked == 1
    assert (job.status, job.attempts) == (JobStatus.PENDING, 0)
    assert job.run_after in {before, after}
    assert job.run_after.astimezone(ZoneInfo(ZONE)).time().isoformat() == "00:00:00"
    assert job.run_after != next_midnight(datetime.now(UTC), UTC)
