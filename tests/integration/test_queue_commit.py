"""How the queue's calls commit: a claim on its own does not wait for the WAL flush (a claim a
crash loses is claimed again, and anything durable made under its lease flushes it first); a
completion of fetch or export jobs neither (a crash that loses it runs the job again), and the
claim that shares its transaction commits as it does; a push's completion waits. `Database.
dedicated` holds one connection for a worker's calls, each still its own transaction. Neither
a claim nor a completion is ever compiled by JIT."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import psycopg
import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import Claim, job_claim_next, job_get
from smuves_sync.models import ContentType, Job, JobKind, JobStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import T0, query
from tests.support.factories import Factory

FETCH = [JobKind.FETCH]
TYPES = (ContentType.SITE_PAGE, ContentType.BLOG_POST)


async def _due(factory: Factory) -> None:
    await factory.backlog(2, content_types=TYPES, run_after=T0 - timedelta(seconds=1))


async def _commit_setting(scoped: Database) -> str:
    [row] = await query(scoped, "commit_setting")
    return str(row["synchronous_commit"])


async def test_a_claim_on_its_own_commits_without_waiting_for_the_flush(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    await _due(factory)
    queue = Queue(worker_db, settings, worker_id="w1")
    # inside a scope only to look at the transaction the claim ran in
    async with worker_db.transaction() as scoped:
        assert await job_claim_next(scoped, Claim("w1", FETCH), now=T0) is not None
        assert await _commit_setting(scoped) == "off"
    async with worker_db.transaction() as scoped:
        assert await Queue(scoped, settings, worker_id="w1").claim(FETCH, now=T0)
        assert await _commit_setting(scoped) == "off"
    assert await queue.claim(FETCH, limit=4, now=T0)  # the rest, and the session is untouched
    assert await _commit_setting(worker_db) == "on"


# each backlog its own portals: in-flight jobs are one per portal, kind and type
_PORTALS = iter(range(3_000_000, 3_100_000))


async def _claimed(factory: Factory, queue: Queue, kind: JobKind) -> list[Job]:
    """One new portal's jobs of `kind`, one per type of TYPES, claimed."""
    await factory.backlog(
        1, kind=kind, content_types=TYPES, first_portal=next(_PORTALS), run_after=T0
    )
    return await queue.claim([kind], limit=len(TYPES), now=T0)


@pytest.mark.parametrize("kind", [JobKind.FETCH, JobKind.EXPORT])
async def test_a_completion_a_crash_would_run_again_commits_without_waiting(
    factory: Factory, worker_db: Database, settings: Settings, kind: JobKind
) -> None:
    first, second = await _claimed(factory, Queue(worker_db, settings, worker_id="w1"), kind)
    async with worker_db.transaction() as scoped:
        await Queue(scoped, settings, worker_id="w1").complete(first, now=T0)
        assert await _commit_setting(scoped) == "off"
    async with worker_db.transaction() as scoped:
        assert await Queue(scoped, settings, worker_id="w1").complete_many([second], now=T0)
        assert await _commit_setting(scoped) == "off"
    assert await _commit_setting(worker_db) == "on"  # the session is untouched


async def test_a_push_completion_waits_for_the_flush_and_so_does_a_batch_with_one(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    queue = Queue(worker_db, settings, worker_id="w1")
    push, pushed_too = await _claimed(factory, queue, JobKind.PUSH)
    fetched = (await _claimed(factory, queue, JobKind.FETCH))[0]
    async with worker_db.transaction() as scoped:
        await Queue(scoped, settings, worker_id="w1").complete(push, now=T0)
        assert await _commit_setting(scoped) == "on"
    async with worker_db.transaction() as scoped:
        done = await Queue(scoped, settings, worker_id="w1").complete_many(
            [fetched, pushed_too], now=T0
        )
        assert done == sorted([fetched.id, pushed_too.id])
        assert await _commit_setting(scoped) == "on"


async def test_a_completion_on_the_last_attempt_waits_for_the_flush(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    """A lost completion of a job on its last attempt would not run it again: the claim fails
    a job whose lease expired after its last attempt."""
    [job, _] = await _claimed(factory, Queue(worker_db, settings, worker_id="w1"), JobKind.FETCH)
    last = dataclasses.replace(job, attempts=job.max_attempts)
    async with worker_db.transaction() as scoped:
        await Queue(scoped, settings, worker_id="w1").complete(last, now=T0)
        assert await _commit_setting(scoped) == "on"


async def test_complete_and_claim_commits_as_its_completions_do(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    queue = Queue(worker_db, settings, worker_id="w1")
    fetched = await _claimed(factory, queue, JobKind.FETCH)
    await factory.backlog(1, content_types=TYPES, first_portal=next(_PORTALS), run_after=T0)
    async with worker_db.transaction() as scoped:
        done, more = await Queue(scoped, settings, worker_id="w1").complete_and_claim(
            fetched[:1], FETCH, limit=1, now=T0
        )
        assert done == [fetched[0].id]
        assert len(more) == 1
        assert await _commit_setting(scoped) == "off"
    pushed = await _claimed(factory, queue, JobKind.PUSH)
    async with worker_db.transaction() as scoped:
        done, _ = await Queue(scoped, settings, worker_id="w1").complete_and_claim(
            pushed[:1], FETCH, limit=1, now=T0
        )
        assert done == [pushed[0].id]
        assert await _commit_setting(scoped) == "on"


async def test_a_dedicated_database_holds_one_connection_each_call_committed(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    await _due(factory)
    async with worker_db.dedicated() as own:
        [first] = await query(own, "errors_backend_pid")
        job = await job_claim_next(own, Claim("w1", FETCH), now=T0)
        assert job is not None
        # committed at once: another connection sees the claim while the block goes on
        seen = await job_get(db, job.id)
        assert seen is not None
        assert seen.status is JobStatus.RUNNING
        [again] = await query(own, "errors_backend_pid")
        assert again == first
        async with own.transaction() as scoped, scoped.dedicated() as same:
            assert same is scoped


async def test_claims_and_completions_are_never_compiled_by_jit(
    factory: Factory, db_url: str
) -> None:
    """A generic plan's estimate grows with the jobs table: past jit_above_cost every claim
    would spend far longer compiling than running. Here JIT is asked for every plan."""
    await _due(factory)
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        if not (await query(conn, "jit_available"))[0]["available"]:
            pytest.skip("this server has no JIT")
        try:
            await query(conn, "auto_explain_loaded")
        except psycopg.Error as error:  # not a superuser's session, or no auto_explain
            pytest.skip(f"auto_explain cannot be loaded: {error}")
        # (plan, where it ran): a statement inside a function has a context, the PL/pgSQL
        # line that ran it; the test's own top-level statements have none
        plans: list[tuple[str, str | None]] = []
        conn.add_notice_handler(
            lambda notice: plans.append((notice.message_primary or "", notice.context))
        )
        await query(conn, "plans_told_as_notices")

        await query(conn, "jobs_counted")
        assert any("JIT:" in plan for plan, _ in plans), "the probe must see JIT where it runs"
        plans.clear()
        claimed = await query(conn, "claim_two", now=T0)
        assert len(claimed) == 2
        done = await query(
            conn,
            "complete_claimed",
            ids=[row["id"] for row in claimed],
            tokens=[row["lease_token"] for row in claimed],
            now=T0,
        )
        assert len(done) == 2
        # the test's own two statements (claim_two, complete_claimed) are JIT's to compile
        inside = [plan for plan, context in plans if context]
        assert len(inside) >= 4  # the functions' own statements were planned and shown
        assert not [plan for plan in inside if "JIT:" in plan]
