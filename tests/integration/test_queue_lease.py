"""Leases: stale reclaim by kind, giving up at max attempts, heartbeats, and fencing."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_complete_many, job_get, job_heartbeat
from smuves_sync.db.runs import run_get
from smuves_sync.errors import LeaseLost
from smuves_sync.models import ContentType, Job, JobKind, JobStatus, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import T0, query
from tests.support.factories import Factory

MINUTE = timedelta(minutes=1)


@pytest.fixture
def queue(worker_db: Database, settings: Settings) -> Queue:
    return Queue(worker_db, settings, worker_id="second")


async def _running(factory: Factory, kind: JobKind, locked_ago: timedelta, **kw: Any) -> Job:
    run = await factory.run(kind=kind, status=RunStatus.RUNNING)
    return await factory.job(
        run,
        status=JobStatus.RUNNING,
        attempts=1,
        locked_at=T0 - locked_ago,
        **kw,
    )


async def test_a_fetch_locked_six_minutes_ago_is_reclaimed_with_another_attempt(
    factory: Factory, queue: Queue
) -> None:
    stale = await _running(factory, JobKind.FETCH, 6 * MINUTE)

    [job] = await queue.claim([JobKind.FETCH], now=T0)

    assert job.id == stale.id
    assert job.attempts == 2
    assert job.lease_token != stale.lease_token
    assert (job.locked_by, job.locked_at, job.heartbeat_at) == ("second", T0, T0)


async def test_a_fetch_locked_four_minutes_ago_is_not_reclaimed(
    factory: Factory, queue: Queue, db: Database
) -> None:
    fresh = await _running(factory, JobKind.FETCH, 4 * MINUTE)

    assert await queue.claim([JobKind.FETCH], now=T0) == []
    assert await job_get(db, fresh.id) == fresh


async def test_exports_use_a_two_minute_lease(factory: Factory, queue: Queue) -> None:
    stale = await _running(factory, JobKind.EXPORT, 2 * MINUTE + timedelta(seconds=1))
    await _running(factory, JobKind.EXPORT, 1 * MINUTE, content_type=ContentType.BLOG_POST)

    assert [j.id for j in await queue.claim([JobKind.EXPORT], limit=5, now=T0)] == [stale.id]


async def test_leases_come_from_the_database_not_the_worker(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    stale = await _running(factory, JobKind.FETCH, 61 * timedelta(seconds=1))
    queue = Queue(worker_db, Settings())
    assert await queue.claim(None, now=T0) == []
    assert queue.lease(JobKind.FETCH) == 5 * MINUTE

    await query(db, "set_job_lease", kind="fetch", lease=timedelta(seconds=60))
    fresh = Queue(worker_db, Settings())
    assert [j.id for j in await fresh.claim(None, now=T0)] == [stale.id]
    assert fresh.lease(JobKind.FETCH) == timedelta(seconds=60)


async def test_a_third_attempt_is_still_claimed(factory: Factory, queue: Queue) -> None:
    await _running(factory, JobKind.FETCH, 6 * MINUTE)
    second = await queue.claim(None, now=T0)
    third = await queue.claim(None, now=T0 + 6 * MINUTE)
    assert [j.attempts for j in second + third] == [2, 3]


async def test_a_stale_job_at_its_last_attempt_fails_and_its_owner_is_notified(
    factory: Factory, queue: Queue, db: Database
) -> None:
    owner = await factory.user()
    run = await factory.run(owner=owner, status=RunStatus.RUNNING)
    stale = await factory.job(
        run, status=JobStatus.RUNNING, attempts=3, locked_at=T0 - 6 * MINUTE, locked_by="gone"
    )

    assert await queue.claim(None, now=T0) == []

    failed = await job_get(db, stale.id)
    assert failed is not None
    assert (failed.status, failed.attempts, failed.finished_at) == (JobStatus.FAILED, 3, T0)
    assert failed.last_error is not None
    assert "gave up after 3 attempts" in failed.last_error
    assert "(gone)" in failed.last_error
    [note] = await query(db, "job_failed_notifications_of_run", run_id=run.id)
    assert (note["user_id"], note["kind"], note["created_at"]) == (owner, "job_failed", T0)
    assert f"portal {run.portal_id}" in note["message"]
    settled = await run_get(db, run.id)
    assert settled is not None and settled.status is RunStatus.FAILED


async def test_a_heartbeat_keeps_the_lease_alive(
    factory: Factory, queue: Queue, worker_db: Database, settings: Settings
) -> None:
    await factory.backlog(1, content_types=[ContentType.SITE_PAGE])
    first = Queue(worker_db, settings, worker_id="first")
    [job] = await first.claim(None, now=T0)

    beat = await first.heartbeat(job, now=T0 + 4 * MINUTE)
    assert beat.heartbeat_at == T0 + 4 * MINUTE
    assert await queue.claim(None, now=T0 + 6 * MINUTE) == []
    assert [j.id for j in await queue.claim(None, now=T0 + 9 * MINUTE + MINUTE)] == [job.id]


async def test_after_a_reclaim_the_first_worker_changes_nothing(
    factory: Factory, queue: Queue, worker_db: Database, db: Database, settings: Settings
) -> None:
    portal = await factory.portal(token_encrypted=b"sealed-token")
    run = await factory.run(portal)
    await factory.job(run)
    first = Queue(worker_db, settings, worker_id="first")
    [mine] = await first.claim(None, now=T0)
    assert await first.portal_token(mine) == b"sealed-token"

    [theirs] = await queue.claim(None, now=T0 + 6 * MINUTE)
    assert theirs.id == mine.id and theirs.lease_token != mine.lease_token

    later = T0 + 7 * MINUTE
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: first.heartbeat(mine, now=later),
        lambda: first.checkpoint(mine, "cursor-9", 900, now=later),
        lambda: first.complete(mine, now=later),
        lambda: first.fail(mine, "boom", retryable=True, now=later),
        lambda: first.fail(mine, "boom", retryable=False, now=later),
        lambda: first.park(mine, later + MINUTE, "rate limit", now=later),
        lambda: first.release(mine, now=later),
        lambda: first.portal_token(mine),
    ]
    for call in calls:
        with pytest.raises(LeaseLost):
            await call()
    # the raw calls change 0 rows
    assert mine.lease_token is not None
    assert await job_heartbeat(worker_db, mine.id, mine.lease_token, now=later) is None
    assert await job_complete_many(worker_db, [(mine.id, mine.lease_token)], now=later) == []
    assert await job_get(db, mine.id) == theirs
    assert await first.complete_many([mine]) == []


async def test_a_job_that_was_never_claimed_cannot_be_touched(
    factory: Factory, queue: Queue
) -> None:
    job = await factory.job()
    with pytest.raises(LeaseLost):
        await queue.heartbeat(job)
    forged = await factory.job(content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING)
    with pytest.raises(LeaseLost):
        await queue.complete(dataclasses.replace(forged, lease_token=uuid.uuid4()))


async def test_checkpoint_saves_progress_and_extends_the_lease(
    factory: Factory, queue: Queue
) -> None:
    await factory.backlog(1, content_types=[ContentType.HUBDB_ROW])
    [job] = await queue.claim(None, now=T0)

    saved = await queue.checkpoint(job, "after:200", 200, total=1000, now=T0 + 4 * MINUTE)

    assert (saved.cursor, saved.processed, saved.total) == ("after:200", 200, 1000)
    assert saved.heartbeat_at == T0 + 4 * MINUTE
    kept = await queue.checkpoint(saved, "after:300", 300, now=T0 + 5 * MINUTE)
    assert kept.total == 1000
    assert await queue.claim(None, now=T0 + 8 * MINUTE) == []
