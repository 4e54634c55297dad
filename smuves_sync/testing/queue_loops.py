"""The loops scripts/bench_queue.py drains its backlog with, in this process or in worker
processes of its own (smuves_sync.testing.queue_peers): today's claim and completion, and the
same loops on the claim and completion of before fair claims
(smuves_sync/testing/sql/queue_bench.sql).

    async with team(url, workers=4) as workers:          # one connection each, held
        done = await run_team(workers, LOOPS["pipelined"], batch=256)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg.rows import scalar_row

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.driver_errors import translated
from smuves_sync.db.jobs import Claim, job_claim_next
from smuves_sync.db.rows import model_row
from smuves_sync.errors import DatabaseError
from smuves_sync.models import Job, JobKind
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.testing.queries import testing_queries

FETCH = [JobKind.FETCH]
DEADLOCK_DETECTED = "40P01"


@dataclass(frozen=True)
class Worker:
    """One benchmark worker: its queue, on a connection of its own (`Database.dedicated`),
    which the fifo loops use too."""

    queue: Queue


# A worker drains the queue and returns how many jobs it completed.
Loop = Callable[[Worker, int], Awaitable[int]]


async def noop_handler(job: Job) -> None:
    """The benchmark's job: nothing, so the queue is all that is measured."""


async def one_at_a_time(worker: Worker, batch: int) -> int:
    """The baseline: claim one job, run it, complete it."""
    queue, done = worker.queue, 0
    claim = Claim(queue.worker_id, FETCH, portal_max_running=queue.settings.portal_max_running)
    while True:
        job = await job_claim_next(queue.db, claim)
        if job is None:
            return done
        await noop_handler(job)
        await queue.complete(job)
        done += 1


async def batched(worker: Worker, batch: int) -> int:
    """Claim a batch, run it, complete it: two round trips a batch."""
    queue, done = worker.queue, 0
    while claimed := await queue.claim(FETCH, limit=batch):
        for job in claimed:
            await noop_handler(job)
        done += len(await queue.complete_many(claimed))
    return done


async def pipelined(worker: Worker, batch: int) -> int:
    """Complete the finished batch and claim the next in one round trip."""
    queue = worker.queue
    done, claimed = 0, await queue.claim(FETCH, limit=batch)
    while claimed:
        for job in claimed:
            await noop_handler(job)
        completed, claimed = await queue.complete_and_claim(claimed, FETCH, limit=batch)
        done += len(completed)
    return done


async def slots(worker: Worker, batch: int) -> int:
    """As the worker's runner does with `batch` slots: claim the free slots, then complete
    each job on its own (one round trip and one settle a job), as jobs that finish at their
    own times are."""
    queue, done = worker.queue, 0
    while claimed := await queue.claim(FETCH, limit=batch):
        for job in claimed:
            await noop_handler(job)
            await queue.complete(job)
            done += 1
    return done


# -- the same loops on the claim and completion of before fair claims -----------------------


def fifo_query(name: str) -> LiteralString:
    """A named query of smuves_sync/testing/sql/queue_bench.sql."""
    return testing_queries()[name]


def fifo_claiming(worker: Worker, limit: int) -> dict[str, Any]:
    """The parameters of a fifo claim."""
    return {"worker": worker.queue.worker_id, "kinds": [str(k) for k in FETCH], "limit": limit}


def fifo_leases(jobs: list[Job]) -> dict[str, Any]:
    """The parameters of a fifo completion."""
    return {"job_ids": [j.id for j in jobs], "lease_tokens": [j.lease_token for j in jobs]}


async def fifo_claim(worker: Worker, limit: int) -> list[Job]:
    """Claim up to `limit` jobs, oldest first (the first claim_jobs)."""
    db = worker.queue.db
    async with db.connection() as conn, conn.cursor(row_factory=model_row(Job)) as cur:
        await cur.execute(fifo_query("bench_fifo_claim"), fifo_claiming(worker, limit))
        return await cur.fetchall()


async def fifo_complete(worker: Worker, jobs: list[Job]) -> int:
    """Complete `jobs` (the first complete_jobs); how many were."""
    db = worker.queue.db
    async with db.connection() as conn, conn.cursor(row_factory=scalar_row) as cur:
        await cur.execute(fifo_query("bench_fifo_complete"), fifo_leases(jobs))
        return len(await cur.fetchall())


async def fifo_one_at_a_time(worker: Worker, batch: int) -> int:
    """`one_at_a_time` before fair claims."""
    done = 0
    while claimed := await fifo_claim(worker, 1):
        await noop_handler(claimed[0])
        done += await fifo_complete(worker, claimed)
    return done


async def fifo_batched(worker: Worker, batch: int) -> int:
    """`batched` before fair claims."""
    done = 0
    while claimed := await fifo_claim(worker, batch):
        for job in claimed:
            await noop_handler(job)
        done += await fifo_complete(worker, claimed)
    return done


async def fifo_pipelined(worker: Worker, batch: int) -> int:
    """`pipelined` before fair claims: completion then claim, one round trip and transaction."""
    done, claimed = 0, await fifo_claim(worker, batch)
    while claimed:
        for job in claimed:
            await noop_handler(job)
        completed, claimed = await fifo_complete_and_claim(worker, claimed, batch)
        done += completed
    return done


async def fifo_complete_and_claim(
    worker: Worker, claimed: list[Job], batch: int
) -> tuple[int, list[Job]]:
    """Complete `claimed` and claim the next batch in one transaction: (completed, claimed).

    The old completion settles its runs before the claim, an order that can deadlock with
    another worker's claim (migrations/README.md, "Lock order"); Postgres then undoes one of
    the two transactions, which is tried again here, as a worker would, rather than ending the
    bench.
    """
    while True:
        try:
            with translated():
                async with worker.queue.db.connection() as conn:
                    completing = conn.cursor(row_factory=scalar_row)
                    claiming = conn.cursor(row_factory=model_row(Job))
                    async with conn.pipeline():
                        await completing.execute(
                            fifo_query("bench_fifo_complete"), fifo_leases(claimed)
                        )
                        await claiming.execute(
                            fifo_query("bench_fifo_claim"), fifo_claiming(worker, batch)
                        )
                    return len(await completing.fetchall()), await claiming.fetchall()
        except DatabaseError as error:
            if error.sqlstate != DEADLOCK_DETECTED:
                raise


LOOPS: dict[str, Loop] = {"baseline": one_at_a_time, "batched": batched, "pipelined": pipelined}
FIFO_LOOPS: dict[str, Loop] = {
    "baseline": fifo_one_at_a_time,
    "batched": fifo_batched,
    "pipelined": fifo_pipelined,
}


# `slots` has no loop of before fair claims: it is measured beside pgqueuer only (--peers).
ALL_LOOPS: dict[str, Loop] = {
    **LOOPS,
    "slots": slots,
    **{f"fifo_{name}": loop for name, loop in FIFO_LOOPS.items()},
}


async def create_fifo_functions(url: str) -> None:
    """Create the claim and completion of before fair claims in the database at `url`."""
    async with pool_for(url, max_size=1) as admin, admin.connection() as conn:
        await conn.execute(fifo_query("bench_fifo_functions"))


@asynccontextmanager
async def team(url: str, workers: int) -> AsyncIterator[list[Worker]]:
    """`workers` benchmark workers acting as smuves_worker, each holding one of the pool's
    connections for its calls (as a worker process of pgqueuer holds its own)."""
    settings = Settings()
    async with (
        pool_for(url, role=DbRole.WORKER, min_size=workers, max_size=workers) as pool,
        AsyncExitStack() as held,
    ):
        members = []
        for n in range(workers):
            own = await held.enter_async_context(Database(pool).dedicated())
            members.append(Worker(Queue(own, settings, worker_id=f"bench-{n}")))
        yield members


async def run_team(workers: list[Worker], loop: Loop, batch: int) -> int:
    """Drain the queue with every worker of `workers` running `loop`; jobs completed."""
    return sum(await asyncio.gather(*(loop(worker, batch) for worker in workers)))
