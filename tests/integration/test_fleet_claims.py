"""Claims at fleet scale (claim_jobs): portals in turn, a person's run first, a cap on a
portal's running fetches — all through the real claim SQL."""

from __future__ import annotations

import asyncio

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.models import ContentType, ExportFormat, Job, JobKind, JobPriority, JobStatus
from smuves_sync.orchestrator import start_export, start_fetch
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import claim_one_at_a_time, query
from tests.support.factories import Factory

ALL = tuple(ContentType)


async def ten_jobs(db: Database, portal_id: int, priority: JobPriority) -> None:
    """A fetch of every type (nine jobs) and an export: ten pending jobs of the portal."""
    await start_fetch(db, portal_id, priority=priority)
    await start_export(db, portal_id, ContentType.SITE_PAGE, ExportFormat.CSV, priority=priority)


async def test_two_portals_with_ten_jobs_each_take_turns_on_one_slot(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    first, second = await factory.portal(), await factory.portal()
    await ten_jobs(db, first, JobPriority.INTERACTIVE)
    await ten_jobs(db, second, JobPriority.INTERACTIVE)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 20)

    assert [job.portal_id for job in order] == [first, second] * 10
    assert await queue_is_empty(worker_db, settings)


async def test_a_portal_that_became_due_later_is_not_stuck_behind_a_big_one(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    big, small = await factory.portal(), await factory.portal()
    await start_fetch(db, big, priority=JobPriority.SCHEDULED)
    await start_fetch(db, small, [ContentType.BLOG_POST], priority=JobPriority.SCHEDULED)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 3)

    assert [job.portal_id for job in order] == [big, small, big]


async def test_a_persons_run_is_claimed_before_waiting_scheduled_runs(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    scheduled = [await factory.portal() for _ in range(3)]
    for portal in scheduled:
        await start_fetch(db, portal, priority=JobPriority.SCHEDULED)
    admin = await factory.portal()
    await start_fetch(db, admin, [ContentType.BLOG], priority=JobPriority.ADMIN)
    person = await factory.portal()
    await start_fetch(db, person, [ContentType.SITE_PAGE, ContentType.BLOG_POST])

    order = await claim_one_at_a_time(Queue(worker_db, settings), 4)

    assert [job.portal_id for job in order] == [person, person, admin, scheduled[0]]
    assert [job.priority for job in order] == [20, 20, 10, 0]


async def test_a_claim_takes_at_most_the_cap_of_one_portals_fetches(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    busy, other = await factory.portal(), await factory.portal()
    await start_fetch(db, busy)  # nine fetch jobs
    queue = Queue(worker_db, settings)  # SMUVES_PORTAL_MAX_RUNNING: 5

    first = await queue.claim([JobKind.FETCH], limit=9)
    assert [job.portal_id for job in first] == [busy] * 5
    assert await queue.claim([JobKind.FETCH], limit=9) == []

    await start_fetch(db, other, [ContentType.BLOG_POST])
    [next_one] = await queue.claim([JobKind.FETCH], limit=9)
    assert next_one.portal_id == other  # a capped portal does not hold others up

    await queue.complete(first[0])
    [freed] = await queue.claim([JobKind.FETCH], limit=9)
    assert freed.portal_id == busy
    assert await running_of(db, busy) == 5


async def test_the_cap_holds_for_jobs_a_finished_transaction_had_locked(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    # The claim leaves the cap's look-up to the update for rows it meets locked (most are
    # skipped); rows whose locker has finished are claimable and must still be capped.
    busy = await factory.portal()
    await start_fetch(db, busy)  # nine fetch jobs
    assert len(await query(db, "fleet_lock_pending_of_portal", portal_id=busy)) == 9

    claimed = await Queue(worker_db, settings).claim([JobKind.FETCH], limit=9)

    assert [job.portal_id for job in claimed] == [busy] * 5
    assert await running_of(db, busy) == 5


async def test_the_cap_holds_when_workers_claim_at_the_same_moment(
    db_url: str, factory: Factory, db: Database, settings: Settings
) -> None:
    portals = [await factory.portal() for _ in range(3)]
    for portal in portals:
        await start_fetch(db, portal)
    capped = Settings(**{**settings.model_dump(), "portal_max_running": 2})

    async def worker(number: int) -> list[Job]:
        async with pool_for(db_url, role=DbRole.WORKER, min_size=1, max_size=1) as pool:
            queue = Queue(Database(pool), capped, worker_id=f"w{number}")
            return await queue.claim([JobKind.FETCH], limit=9)

    claimed = [job for jobs in await asyncio.gather(*(worker(n) for n in range(6))) for job in jobs]

    for portal in portals:
        assert await running_of(db, portal) <= 2
    assert len({job.id for job in claimed}) == len(claimed)


async def test_exports_are_not_capped(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    portal = await factory.portal()
    for content_type in ALL[:6]:
        await start_export(db, portal, content_type, ExportFormat.CSV)
    capped = Settings(**{**settings.model_dump(), "portal_max_running": 1})

    claimed = await Queue(worker_db, capped).claim([JobKind.EXPORT], limit=9)

    assert len(claimed) == 6


async def test_a_retried_job_goes_to_the_back_of_the_line(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    first, second = await factory.portal(), await factory.portal()
    await start_fetch(db, first, [ContentType.SITE_PAGE])
    await start_fetch(db, second, [ContentType.SITE_PAGE])
    quick = Settings(**{**settings.model_dump(), "backoff_base_seconds": 0})
    queue = Queue(worker_db, quick)
    [failing] = await queue.claim(None)
    retried = await queue.fail(failing, "flaky", retryable=True)
    assert retried.status is JobStatus.PENDING

    [after] = await queue.claim(None)
    [again] = await queue.claim(None)

    assert (after.portal_id, again.id) == (second, failing.id)


async def queue_is_empty(worker_db: Database, settings: Settings) -> bool:
    """Nothing is left to claim."""
    return await Queue(worker_db, settings).claim(None, limit=100) == []


async def running_of(db: Database, portal_id: int) -> int:
    """How many jobs of the portal are running."""
    rows = await query(db, "fleet_running_of_portal", portal_id=portal_id)
    return int(rows[0]["n"])
