"""Settling costs only the runs that finish: a claim that starts a run, or a completion that
leaves jobs of its run open, counts no jobs and builds no notice (settle_locked_runs,
notify_settled_runs); the completion of the last job settles the run and notifies once.
Counted by the server (track_functions), one transaction, one connection."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from smuves_sync.db import Pool
from smuves_sync.models import ContentType, Run
from tests.support import T0, query
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
                "run_rejects_note": 1,
                "settle_locked_runs": 1,
            }
            assert await query(conn, "settle_run_notices", run_id=run.id) == [
                {"status": "completed", "notices": 1}
            ]
