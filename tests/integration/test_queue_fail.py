"""Failures: backoff with jitter for retryable errors, at once for permanent ones; park and
release hand a job back without spending an attempt."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from smuves_sync.db import Database
from smuves_sync.db.runs import run_get
from smuves_sync.errors import HubSpotAuthError, HubSpotRetryableError
from smuves_sync.models import ContentType, Job, JobStatus, Run, RunStatus
from smuves_sync.queue import Queue, Wakeups
from smuves_sync.settings import Settings
from tests.support import T0, query
from tests.support.factories import Factory

SECOND = timedelta(seconds=1)


async def _claimed(
    factory: Factory, worker_db: Database, settings: Settings, run: Run | None = None, **job: Any
) -> tuple[Queue, Job]:
    """A planted job claimed at T0, and the queue that claimed it."""
    await factory.job(run, **job)
    queue = Queue(worker_db, settings)
    [claimed] = await queue.claim(None, now=T0)
    return queue, claimed


def _queue(worker_db: Database, db_url: str, **overrides: Any) -> Queue:
    settings = Settings(database_url=db_url, **overrides)
    return Queue(worker_db, settings, worker_id="w")


async def test_retryable_failures_back_off_exponentially_then_give_up(
    factory: Factory, worker_db: Database, db: Database, db_url: str
) -> None:
    owner = await factory.user()
    run = await factory.run(owner=owner)
    await factory.job(run)
    queue = _queue(worker_db, db_url, backoff_base_seconds=10, backoff_jitter_ratio=0)

    [job] = await queue.claim(None, now=T0)
    retry = await queue.fail(job, HubSpotRetryableError("HubSpot answered 502"), now=T0)
    # attempts 1: base * 2^0
    assert (retry.status, retry.run_after, retry.attempts) == (
        JobStatus.PENDING,
        T0 + 10 * SECOND,
        1,
    )
    assert retry.last_error == "HubSpotRetryableError: HubSpot answered 502"
    assert (retry.lease_token, retry.locked_at, retry.locked_by) == (None, None, None)
    assert await queue.claim(None, now=T0 + 9 * SECOND) == []

    t1 = T0 + 10 * SECOND
    [job] = await queue.claim(None, now=t1)
    retry = await queue.fail(job, "timeout", retryable=True, now=t1)
    assert (retry.run_after, retry.attempts) == (t1 + 20 * SECOND, 2)  # base * 2^1

    t2 = t1 + 20 * SECOND
    [job] = await queue.claim(None, now=t2)
    assert job.attempts == 3
    final = await queue.fail(job, "timeout again", retryable=True, now=t2)
    assert (final.status, final.finished_at, final.last_error) == (
        JobStatus.FAILED,
        t2,
        "timeout again",
    )
    # The run's owner is told once, as the run settles, and why its job failed.
    assert await query(db, "job_failed_notifications_of_run", run_id=run.id) == []
    [note] = await query(db, "sync_notifications_of_run", run_id=run.id)
    assert (note["user_id"], note["kind"]) == (owner, "run_failed")
    assert note["message"].endswith(
        f"0 of 1 job(s) completed; failed: site_page (see smuves run {run.id}). timeout again"
    )
    settled = await run_get(db, run.id)
    assert settled is not None and settled.status is RunStatus.FAILED


async def test_jitter_adds_at_most_its_share_and_the_delay_is_capped(
    factory: Factory, worker_db: Database, db_url: str
) -> None:
    run = await factory.run()
    await factory.job(
        run, status=JobStatus.RUNNING, attempts=3, max_attempts=9, locked_at=T0 - 360 * SECOND
    )
    await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.RUNNING,
        attempts=6,
        max_attempts=9,
        locked_at=T0 - 360 * SECOND,
    )
    queue = _queue(
        worker_db,
        db_url,
        backoff_base_seconds=10,
        backoff_max_seconds=300,
        backoff_jitter_ratio=0.5,
    )
    third, sixth = await queue.claim(None, limit=2, now=T0)  # reclaimed: attempts 4 and 7
    assert (third.attempts, sixth.attempts) == (4, 7)

    retry = await queue.fail(third, "x", retryable=True, now=T0)
    assert T0 + 80 * SECOND <= retry.run_after <= T0 + 120 * SECOND  # 10 * 2^3, +50 %
    capped = await queue.fail(sixth, "x", retryable=True, now=T0)
    assert T0 + 300 * SECOND <= capped.run_after <= T0 + 450 * SECOND  # min(640, 300), +50 %


async def test_a_permanent_failure_fails_at_once(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await factory.run()
    queue, job = await _claimed(factory, worker_db, settings, run)

    failed = await queue.fail(
        job, HubSpotAuthError("the token was revoked; reconnect the portal"), now=T0
    )

    assert (failed.status, failed.attempts, failed.finished_at) == (JobStatus.FAILED, 1, T0)
    assert failed.last_error == "HubSpotAuthError: the token was revoked; reconnect the portal"
    [note] = await query(db, "sync_notifications_of_run", run_id=run.id)
    assert note["kind"] == "run_failed" and note["message"].endswith("HubSpotAuthError: failed")


async def test_a_long_error_is_truncated(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    queue, job = await _claimed(factory, worker_db, settings)
    failed = await queue.fail(job, "x" * 10_000, retryable=False, now=T0)
    assert failed.last_error == "x" * 2000


async def test_park_waits_without_spending_an_attempt_and_keeps_the_cursor(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    queue, job = await _claimed(factory, worker_db, settings)
    job = await queue.checkpoint(job, "after:500", 500, now=T0)
    resets = T0 + timedelta(hours=7)

    parked = await queue.park(job, resets, "HubSpot daily limit reached", now=T0)

    assert (parked.status, parked.attempts, parked.run_after) == (JobStatus.PENDING, 0, resets)
    assert (parked.cursor, parked.processed) == ("after:500", 500)
    assert parked.lease_token is None
    assert await queue.claim(None, now=resets - SECOND) == []
    [again] = await queue.claim(None, now=resets)
    assert (again.attempts, again.cursor) == (1, "after:500")


async def test_release_hands_the_job_back_now_and_wakes_listeners(
    factory: Factory, worker_db: Database, settings: Settings, db_url: str
) -> None:
    queue, job = await _claimed(factory, worker_db, settings, attempts=1)
    assert job.attempts == 2
    job = await queue.checkpoint(job, "page-3", 300, now=T0)

    async with Wakeups(db_url) as wakeups:
        await wakeups.ready()
        await wakeups.wait(0)  # the wake-up every (re)connect gives
        released = await queue.release(job, now=T0 + SECOND)
        assert await wakeups.wait(30)

    assert (released.status, released.attempts, released.run_after) == (
        JobStatus.PENDING,
        1,
        T0 + SECOND,
    )
    assert released.cursor == "page-3"
    [again] = await queue.claim(None, now=T0 + SECOND)
    assert again.id == job.id


@pytest.mark.parametrize("retryable", [True, False])
async def test_fail_uses_the_errors_own_flag_unless_told(
    factory: Factory, worker_db: Database, settings: Settings, retryable: bool
) -> None:
    queue, job = await _claimed(factory, worker_db, settings)
    error = HubSpotRetryableError("503") if retryable else ValueError("bad page")
    failed = await queue.fail(job, error, now=T0)
    assert failed.status is (JobStatus.PENDING if retryable else JobStatus.FAILED)
