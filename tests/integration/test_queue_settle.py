"""Settling costs only the runs that finish: a claim that starts a run, or a completion that
leaves jobs of its run open, counts no jobs and builds no notice (settle_locked_runs,
notify_settled_runs); the completion of the last job settles the run and notifies once.
Counted by the server (track_functions), one transaction, one connection. And two workers
finishing a run's last jobs at once, each in its own transaction, settle it all the same."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from smuves_sync.db import Pool
from smuves_sync.models import ContentType, Run
from tests.support import T0, eventually, query
from tests.support.factories import Factory


async def _two_jobs(factory: Factory) -> Run:
    run = await factory.run()
    for content_type in (ContentType.SITE_PAGE, ContentType.BLOG_POST):
        await factory.job(run, content_type=content_type, run_after=T0 - timedelta(seconds=1))
    return run


async def _claim_and_complete(conn: AsyncConnection[TupleRow], batch: bool) -> None:
    [claimed] = await query(conn, "settle_claim_one", now=T0)
    # a batch of one and the batch path: a lost lease rides along and is left out
    ids = [claimed["id"], -1] if batch else [claimed["id"]]
    tokens = [claimed["lease_token"]] * len(ids)
    done = await query(conn, "settle_complete", job_ids=ids, lease_tokens=tokens, now=T0)
    assert [row["id"] for row in done] == [claimed["id"]]


async def _calls(conn: AsyncConnection[TupleRow]) -> dict[str, Any]:
    return {row["name"]: row["calls"] for row in await query(conn, "settle_calls")}


async def test_only_the_last_completion_of_a_run_settles_it_and_notifies(
    factory: Factory, admin_pool: Pool
) -> None:
    for batch in (False, True):
        run = await _two_jobs(factory)
        async with admin_pool.connection() as conn, conn.transaction():
            await query(conn, "settle_count_calls")

            await _claim_and_complete(conn, batch)
            assert set((await _calls(conn)).values()) == {0}
            assert await query(conn, "settle_run_notices", run_id=run.id) == [
                {"status": "running", "notices": 0}
            ]

            await _claim_and_complete(conn, batch)
            assert await _calls(conn) == {
                "notify_run_owners": 1,
                "notify_settled_runs": 1,
                "run_failures_note": 0,  # no job failed: nothing to say why
                "run_rejects_note": 0,  # nothing was kept out: nothing to say what
                "settle_locked_runs": 1,
            }
            assert await query(conn, "settle_run_notices", run_id=run.id) == [
                {"status": "completed", "notices": 1}
            ]


async def _complete_then_claim(
    conn: AsyncConnection[TupleRow], job: dict[str, Any], run: Run, worker: str
) -> None:
    """One batch worker's complete-and-claim of `job`, its transaction left open."""
    await query(
        conn,
        "settle_complete_leaving_runs",
        job_ids=[job["id"]],
        lease_tokens=[job["lease_token"]],
        now=T0,
    )
    # nothing left to claim: the claim only settles
    assert await query(conn, "settle_claim_settling", worker=worker, run_ids=[run.id], now=T0) == []


async def test_two_workers_finishing_a_run_at_once_settle_it_and_claim_nothing(
    factory: Factory, admin_pool: Pool
) -> None:
    run = await _two_jobs(factory)
    first, second = await query(admin_pool, "settle_claim_two", now=T0)

    async with admin_pool.connection() as a, admin_pool.connection() as b:
        [b_backend] = await query(b, "settle_backend_pid")
        async with a.transaction():
            await _complete_then_claim(a, first, run, "w1")

            async def second_worker() -> None:
                async with b.transaction():
                    await _complete_then_claim(b, second, run, "w2")

            finishing = asyncio.create_task(second_worker())

            # The second worker's claim must wait for the run the first one holds to settle:
            # had it counted now, it would see the first job still running, as the first
            # worker saw the second, and neither would settle the run.
            async def waits_or_done() -> bool:
                if finishing.done():
                    return True
                [row] = await query(admin_pool, "settle_backend_waits", pid=b_backend["pid"])
                return bool(row["waits"])

            await eventually(waits_or_done, what="the second worker waits for the run's lock")
        await finishing

    assert await query(admin_pool, "settle_run_notices", run_id=run.id) == [
        {"status": "completed", "notices": 1}
    ]
