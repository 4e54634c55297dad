"""How the queue's calls commit: a claim on its own does not wait for the WAL flush (a claim a
crash loses is claimed again, and anything durable made under its lease flushes it first); a
completion, and the claim that shares its transaction, do. `Database.dedicated` holds one
connection for a worker's calls, each still its own transaction. Neither a claim nor a
completion is ever compiled by JIT."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import Claim, job_claim_next, job_complete_and_claim, job_get
from smuves_sync.models import ContentType, JobKind, JobStatus
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


async def test_a_completion_and_the_claim_after_it_commit_synchronously(
    factory: Factory, worker_db: Database, settings: Settings
) -> None:
    await _due(factory)
    claimed = await Queue(worker_db, settings, worker_id="w1").claim(FETCH, now=T0)
    leases = [(job.id, job.lease_token) for job in claimed if job.lease_token is not None]
    async with worker_db.transaction() as scoped:
        done, more = await job_complete_and_claim(
            scoped, leases, Claim("w1", FETCH), run_ids=[claimed[0].run_id], now=T0
        )
        assert done == [claimed[0].id]
        assert len(more) == 1
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
