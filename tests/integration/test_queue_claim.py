"""Claiming: exactly once under concurrency, oldest first, runs start with their first job;
the batch worker's complete-and-claim in one transaction."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from datetime import timedelta

import pytest

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.jobs import Claim, job_claim_next, job_get
from smuves_sync.db.runs import run_get
from smuves_sync.errors import DatabaseError
from smuves_sync.models import ContentType, Job, JobKind, JobStatus, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import T0, query
from tests.support.factories import Factory

# The backlogs below are five jobs per portal (the counts are written for five), of the types
# a portal has had from the start.
FIVE = tuple(ContentType)[:5]


async def due_backlog(factory: Factory, portals: int) -> list[int]:
    """The five jobs of each of `portals` new portals (a run each), due a second before T0."""
    return await factory.backlog(portals, content_types=FIVE, run_after=T0 - timedelta(seconds=1))


async def first_claim(
    factory: Factory, worker_db: Database, settings: Settings, *, portals: int, limit: int
) -> tuple[Queue, list[Job]]:
    """Worker w1, and its first claim of up to `limit` jobs of a due backlog of `portals`."""
    await due_backlog(factory, portals)
    queue = Queue(worker_db, settings, worker_id="w1")
    return queue, await queue.claim([JobKind.FETCH], limit=limit, now=T0)


async def test_eight_claimers_on_separate_connections_drain_2000_jobs_each_once(
    db_url: str, factory: Factory, db: Database, settings: Settings
) -> None:
    job_ids = await factory.backlog(400, content_types=FIVE)  # 400 portals x 5 types
    assert len(job_ids) == 2000

    async def claimer(number: int) -> list[int]:
        claimed: list[int] = []
        # one pool of one connection each: eight separate sessions racing for the same rows
        async with pool_for(db_url, role=DbRole.WORKER, min_size=1, max_size=1) as pool:
            queue = Queue(Database(pool), settings, worker_id=f"claimer-{number}")
            while True:
                jobs = await queue.claim([JobKind.FETCH], limit=1 + number % 4)
                if not jobs:
                    return claimed
                claimed.extend(j.id for j in jobs)
                assert all(j.locked_by == f"claimer-{number}" for j in jobs)
                done = await queue.complete_many(jobs)
                assert done == [j.id for j in jobs]

    results = await asyncio.gather(*(claimer(n) for n in range(8)))
    claims = Counter(job_id for result in results for job_id in result)
    assert sorted(claims) == sorted(job_ids)
    assert set(claims.values()) == {1}
    assert await query(db, "job_statuses") == [{"status": "completed", "n": 2000}]
    assert await query(db, "run_statuses") == [{"status": "completed", "n": 400}]


async def test_eight_pipelined_workers_complete_and_claim_2000_jobs_without_deadlocks(
    db_url: str, factory: Factory, db: Database, settings: Settings
) -> None:
    # Each worker completes its batch and claims the next in one transaction, so claims meet
    # jobs that other workers are completing right then: the lock order of
    # migrations/functions/queue.sql ("Lock order") is what keeps them from deadlocking. A
    # deadlock would raise here.
    job_ids = await factory.backlog(400, content_types=FIVE)

    async def worker(number: int) -> list[int]:
        done: list[int] = []
        async with pool_for(db_url, role=DbRole.WORKER, min_size=1, max_size=1) as pool:
            queue = Queue(Database(pool), settings, worker_id=f"pipelined-{number}")
            jobs = await queue.claim([JobKind.FETCH], limit=2 + number % 3)
            while jobs:
                completed, jobs = await queue.complete_and_claim(
                    jobs, [JobKind.FETCH], limit=2 + number % 3
                )
                done.extend(completed)
        return done

    results = await asyncio.gather(*(worker(n) for n in range(8)))
    assert sorted(job_id for result in results for job_id in result) == sorted(job_ids)
    assert await query(db, "job_statuses") == [{"status": "completed", "n": 2000}]
    assert await query(db, "run_statuses") == [{"status": "completed", "n": 400}]


async def test_a_worker_id_prefix_names_the_claimer_in_locked_by(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    run = await factory.run()
    await factory.job(run, run_after=T0 - timedelta(seconds=1))
    # SMUVES_WORKER_ID: the hosts of a fleet tell their claims apart by it
    queue = Queue(worker_db, settings.model_copy(update={"worker_id": "host-b"}))

    [job] = await queue.claim([JobKind.FETCH], now=T0)

    assert job.locked_by == queue.worker_id
    assert queue.worker_id == f"host-b:{os.getpid()}"


async def test_claim_sets_the_lease_and_starts_the_run(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await factory.run()
    planted = await factory.job(run, run_after=T0 - timedelta(seconds=1))
    queue = Queue(worker_db, settings, worker_id="w1")

    [job] = await queue.claim([JobKind.FETCH], now=T0)

    assert job.id == planted.id
    assert job.status is JobStatus.RUNNING
    assert job.attempts == 1
    assert (job.locked_at, job.heartbeat_at, job.locked_by) == (T0, T0, "w1")
    assert job.lease_token is not None
    started = await run_get(db, run.id)
    assert started is not None
    assert (started.status, started.started_at) == (RunStatus.RUNNING, T0)


async def test_claims_take_the_oldest_due_job_and_respect_kinds_and_run_after(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    fetch_run = await factory.run()
    export_run = await factory.run(kind=JobKind.EXPORT)
    later = await factory.job(
        fetch_run, content_type=ContentType.BLOG_POST, run_after=T0 - timedelta(minutes=1)
    )
    older = await factory.job(
        fetch_run, content_type=ContentType.SITE_PAGE, run_after=T0 - timedelta(minutes=5)
    )
    not_due = await factory.job(
        fetch_run, content_type=ContentType.HUBDB_ROW, run_after=T0 + timedelta(seconds=1)
    )
    export = await factory.job(export_run, run_after=T0 - timedelta(hours=1))
    queue = Queue(worker_db, settings)

    assert [j.id for j in await queue.claim([JobKind.FETCH], now=T0)] == [older.id]
    assert [j.id for j in await queue.claim([JobKind.FETCH], limit=5, now=T0)] == [later.id]
    assert await queue.claim([JobKind.FETCH], limit=5, now=T0) == []
    assert [j.id for j in await queue.claim(None, limit=5, now=T0)] == [export.id]
    due_later = await queue.claim(None, now=T0 + timedelta(seconds=1))
    assert [j.id for j in due_later] == [not_due.id]


async def test_claim_next_job_claims_at_most_one(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    await due_backlog(factory, 1)
    queue = Queue(worker_db, settings)
    claim = Claim("w", [JobKind.FETCH])
    first = await job_claim_next(worker_db, claim, now=T0)
    assert first is not None and first.status is JobStatus.RUNNING
    assert len(await queue.claim([JobKind.FETCH], limit=10, now=T0)) == 4


async def test_a_claim_takes_expired_leases_first_then_due_jobs_within_its_limit(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    due = [
        await factory.job(run, content_type=t, run_after=T0 - timedelta(minutes=i))
        for i, t in enumerate([ContentType.SITE_PAGE, ContentType.BLOG_POST, ContentType.HUBDB_ROW])
    ]
    stale = await factory.job(
        run,
        content_type=ContentType.LANDING_PAGE,
        status=JobStatus.RUNNING,
        attempts=1,
        locked_at=T0 - timedelta(minutes=6),
    )
    queue = Queue(worker_db, settings, worker_id="w1")

    claimed = await queue.claim([JobKind.FETCH], limit=3, now=T0)

    # the expired lease and the two oldest due jobs, returned in id order
    assert [j.id for j in claimed] == sorted([stale.id, due[2].id, due[1].id])
    assert {j.id: j.attempts for j in claimed} == {stale.id: 2, due[2].id: 1, due[1].id: 1}
    # every field of the returned records is the row as stored
    assert claimed == [await job_get(db, j.id) for j in claimed]
    left = await job_get(db, due[0].id)
    assert left is not None and left.status is JobStatus.PENDING


async def test_complete_and_claim_finishes_a_batch_and_claims_the_next(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    job_ids = await due_backlog(factory, 2)  # 10 jobs, 2 runs
    queue = Queue(worker_db, settings, worker_id="w1")
    first = await queue.claim([JobKind.FETCH], limit=6, now=T0)

    completed, second = await queue.complete_and_claim(first, [JobKind.FETCH], limit=6, now=T0)

    assert completed == [j.id for j in first]
    assert sorted(j.id for j in first + second) == sorted(job_ids)
    assert all(j.status is JobStatus.RUNNING and j.locked_by == "w1" for j in second)
    completed, third = await queue.complete_and_claim(second, [JobKind.FETCH], limit=6, now=T0)
    assert (completed, third) == ([j.id for j in second], [])
    assert await query(db, "run_statuses") == [{"status": "completed", "n": 2}]


async def test_complete_and_claim_settles_a_finished_run_and_not_one_it_claims_from(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    queue, first = await first_claim(factory, worker_db, settings, portals=2, limit=9)
    finished_run = Counter(j.run_id for j in first).most_common(1)[0][0]

    # the batch finishes one run, and the next claim takes the other run's last job
    _, second = await queue.complete_and_claim(first, [JobKind.FETCH], limit=1, now=T0)

    (last,) = second
    assert last.run_id != finished_run
    done, open_ = await run_get(db, finished_run), await run_get(db, last.run_id)
    assert done is not None and done.status is RunStatus.COMPLETED
    assert open_ is not None and open_.status is RunStatus.RUNNING
    await queue.complete_and_claim(second, [JobKind.FETCH], limit=1, now=T0)
    assert await query(db, "run_statuses") == [{"status": "completed", "n": 2}]


async def test_complete_and_claim_is_one_transaction(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    queue, claimed = await first_claim(factory, worker_db, settings, portals=1, limit=2)

    # the claim is refused, so the completions sent with it are undone
    with pytest.raises(DatabaseError, match="p_limit must be at least 1"):
        await queue.complete_and_claim(claimed, [JobKind.FETCH], limit=0, now=T0)

    assert [await job_get(db, j.id) for j in claimed] == claimed
    completed, _ = await queue.complete_and_claim(claimed, [JobKind.FETCH], limit=1, now=T0)
    assert completed == [j.id for j in claimed]
