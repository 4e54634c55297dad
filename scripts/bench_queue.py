"""Benchmark the Postgres job queue: drain throughput and NOTIFY wake-up latency.

    .venv/bin/python scripts/bench_queue.py [--jobs 20000] [--workers 4] [--batch 256]
                                            [--repeat 3] [--json]

Throughput: N no-op fetch jobs are planted (their portals dealt among 20 owners, placed in
line as enqueue_job places them), then K concurrent workers (one process, one
pooled connection each, acting as smuves_worker) drain them through the real path — claim,
run the (no-op) handler, complete — and jobs/s is N over the wall time. A worker awaits the
handlers of its batch in turn: with no-op handlers, a task per job would measure asyncio
(some 20 µs a job here) rather than the queue. Three loops are measured side by side in the
same run:

    baseline    one job per call: `claim_next_job`, then `complete_job` (two round trips a job)
    batched     `claim_jobs` of a batch, then `complete_jobs` of it (two round trips a batch)
    pipelined   `Queue.complete_and_claim`: the finished batch's completion and the next
                claim in one round trip and one transaction (one round trip a batch)

Each loop is also run with the claim and the completion as they were before fair claims
(the first claim_jobs, oldest first with no cap; the first complete_jobs with the first
settle_runs; their bodies are in smuves_sync/testing/sql/queue_bench.sql, created in the
scratch database only), on the same backlog, right before or after today's (the order
alternates between repeats): the `fifo` figures, and today's as a ratio of them.

Each call and each commit has a fixed cost (here most of a millisecond of server time per queue
call and a WAL flush of a few milliseconds per commit), which a batch shares out: the default
batch is 256; try --batch 64 to see the difference.

Wake-up latency: one idle worker waits on NOTIFY (falling back to polling); 200 times a job
is enqueued and committed, and the time from the commit returning to the handler starting
is recorded; p50 and p95 are printed.

Every measurement is repeated --repeat times, each on a fresh scratch database (created,
migrated, dropped); the figures printed last are the medians. Other work on the machine moves
the figures a lot: the load average is printed before and after.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL,
else the embedded PostgreSQL in a temporary directory. With --json the last line is one JSON
object: {"jobs_per_s": …, "wakeup_p50_ms": …, "wakeup_p95_ms": …, …} (medians; jobs_per_s is
the pipelined loop; fifo_jobs_per_s and ratio_to_fifo beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, LiteralString

from psycopg.errors import DeadlockDetected
from psycopg.rows import scalar_row

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.jobs import Claim, job_claim_next, job_enqueue
from smuves_sync.db.pool import Pool
from smuves_sync.db.rows import model_row
from smuves_sync.db.runs import run_create
from smuves_sync.models import ContentType, Job, JobKind
from smuves_sync.queue import Queue, Wakeups
from smuves_sync.settings import Settings
from smuves_sync.testing.queries import testing_queries
from smuves_sync.testing.scratch import scratch_database, scratch_server, seed_backlog

FETCH = [JobKind.FETCH]
TYPES = len(ContentType)
OWNERS = 20  # the backlog's owners: claims share the workers among owners too


@dataclass(frozen=True)
class Worker:
    """One benchmark worker: its queue, and the pool under it (the fifo loops' connections)."""

    queue: Queue
    pool: Pool


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
    async with worker.pool.connection() as conn, conn.cursor(row_factory=model_row(Job)) as cur:
        await cur.execute(fifo_query("bench_fifo_claim"), fifo_claiming(worker, limit))
        return await cur.fetchall()


async def fifo_complete(worker: Worker, jobs: list[Job]) -> int:
    """Complete `jobs` (the first complete_jobs); how many were."""
    async with worker.pool.connection() as conn, conn.cursor(row_factory=scalar_row) as cur:
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
            async with worker.pool.connection() as conn:
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
        except DeadlockDetected:
            continue


LOOPS: dict[str, Loop] = {"baseline": one_at_a_time, "batched": batched, "pipelined": pipelined}
FIFO_LOOPS: dict[str, Loop] = {
    "baseline": fifo_one_at_a_time,
    "batched": fifo_batched,
    "pipelined": fifo_pipelined,
}


async def drain(url: str, loop: Loop, jobs: int, workers: int, batch: int) -> float:
    """Plant `jobs` jobs and drain them with `workers` workers running `loop`; jobs per second."""
    settings = Settings()
    planted = await seed_backlog(url, portals=-(-jobs // TYPES), owners=OWNERS)
    if loop in FIFO_LOOPS.values():
        async with pool_for(url, max_size=1) as admin, admin.connection() as conn:
            await conn.execute(fifo_query("bench_fifo_functions"))
    async with pool_for(url, role=DbRole.WORKER, min_size=workers, max_size=workers) as pool:
        team = [
            Worker(Queue(Database(pool), settings, worker_id=f"bench-{n}"), pool)
            for n in range(workers)
        ]
        start = time.perf_counter()
        counts = await asyncio.gather(*(loop(worker, batch) for worker in team))
        elapsed = time.perf_counter() - start
    if sum(counts) != planted:
        raise SystemExit(
            f"drained {sum(counts)} jobs of {planted}: the queue lost or repeated some"
        )
    return planted / elapsed


async def wakeup_latencies(url: str, samples: int) -> list[float]:
    """Milliseconds from an enqueue's commit to the idle worker's handler starting."""
    settings = Settings()
    portals = await seed_backlog(url, portals=samples, content_types=[ContentType.SITE_PAGE])
    async with (
        pool_for(url, max_size=2) as admin_pool,
        pool_for(url, role=DbRole.WORKER, max_size=2) as worker_pool,
    ):
        admin = Database(admin_pool)
        queue = Queue(Database(worker_pool), settings, worker_id="bench-idle")
        while await queue.complete_many(await queue.claim(FETCH, limit=500)):
            pass  # clear the planted jobs: the portals are what we wanted
        started: dict[int, float] = {}
        handled = asyncio.Event()
        idle = asyncio.Event()
        stop = asyncio.Event()

        async def idle_worker(wakeups: Wakeups) -> None:
            while not stop.is_set():
                claimed = await queue.claim(FETCH, limit=1)
                if not claimed:
                    idle.set()
                    await wakeups.wait(settings.poll_interval_seconds)
                    continue
                for job in claimed:
                    started[job.id] = time.perf_counter()
                    handled.set()
                    await noop_handler(job)
                    await queue.complete(job)

        latencies: list[float] = []
        async with Wakeups(url, kinds=FETCH) as wakeups:
            await wakeups.ready()
            task = asyncio.create_task(idle_worker(wakeups))
            for portal_id in range(1, portals + 1):
                run = await run_create(admin, portal_id, JobKind.FETCH, [ContentType.SITE_PAGE])
                await idle.wait()  # the worker is waiting, not claiming
                idle.clear()
                handled.clear()
                job = await job_enqueue(admin, run.id, ContentType.SITE_PAGE)
                committed = time.perf_counter()
                assert job is not None
                await handled.wait()
                latencies.append((started[job.id] - committed) * 1000)
            stop.set()
            await task
        return latencies


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0 to 100) by the inclusive method."""
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def main(args: argparse.Namespace) -> dict[str, float]:
    """Run every measurement --repeat times and print the figures and their medians."""
    names = (*LOOPS, *(f"fifo_{name}" for name in FIFO_LOOPS), "p50", "p95")
    figures: dict[str, list[float]] = {name: [] for name in names}
    sizes = {"baseline": args.baseline_jobs, "batched": args.jobs, "pipelined": args.jobs}
    load_before = load_average()
    print(f"load average {load_before}; {args.workers} workers, batch {args.batch}")
    async with scratch_server(args.database_url or Settings().database_url) as server_url:
        for repeat in range(1, args.repeat + 1):
            # The loops take turns inside each repeat, so that a burst of other work on the
            # machine hits all of them rather than one.
            for name, loop in LOOPS.items():
                pair = [(name, loop), (f"fifo_{name}", FIFO_LOOPS[name])]
                for label, run in pair if repeat % 2 else pair[::-1]:
                    async with scratch_database(server_url, prefix="smuves_bench") as url:
                        rate = await drain(url, run, sizes[name], args.workers, args.batch)
                    figures[label].append(rate)
                    print(f"  #{repeat} {label:<14} {rate:8.0f} jobs/s ({sizes[name]} jobs)")
            async with scratch_database(server_url, prefix="smuves_bench") as url:
                latencies = await wakeup_latencies(url, args.wakeups)
            figures["p50"].append(percentile(latencies, 50))
            figures["p95"].append(percentile(latencies, 95))
            print(
                f"  #{repeat} wake-up   p50 {figures['p50'][-1]:.2f} ms, "
                f"p95 {figures['p95'][-1]:.2f} ms, max {max(latencies):.2f} ms "
                f"({len(latencies)} jobs)"
            )
    median = {name: statistics.median(values) for name, values in figures.items()}
    load_after = load_average()
    print(f"medians of {args.repeat} (load average {load_after}):")
    print(f"baseline  one job per call       : {median['baseline']:8.0f} jobs/s")
    print(
        f"batched   claim, complete {args.batch:>5}: {median['batched']:8.0f} jobs/s "
        f"({median['batched'] / median['baseline']:.0f}x baseline)"
    )
    print(
        f"pipelined complete+claim  {args.batch:>5}: {median['pipelined']:8.0f} jobs/s "
        f"({median['pipelined'] / median['baseline']:.0f}x baseline, "
        f"{median['pipelined'] / median['batched']:.2f}x batched)"
    )
    for name in LOOPS:
        print(
            f"{name:<9} before fair claims       : {median[f'fifo_{name}']:8.0f} jobs/s "
            f"(today {median[name] / median[f'fifo_{name}']:.2f}x of it)"
        )
    print(
        f"wake-up   commit -> handler start : p50 {median['p50']:.2f} ms, "
        f"p95 {median['p95']:.2f} ms"
    )
    return {
        "jobs_per_s": round(median["pipelined"], 1),
        "wakeup_p50_ms": round(median["p50"], 3),
        "wakeup_p95_ms": round(median["p95"], 3),
        "batched_jobs_per_s": round(median["batched"], 1),
        "baseline_jobs_per_s": round(median["baseline"], 1),
        "fifo_jobs_per_s": round(median["fifo_pipelined"], 1),
        "fifo_batched_jobs_per_s": round(median["fifo_batched"], 1),
        "fifo_baseline_jobs_per_s": round(median["fifo_baseline"], 1),
        "ratio_to_fifo": round(median["pipelined"] / median["fifo_pipelined"], 3),
        "batched_ratio_to_fifo": round(median["batched"] / median["fifo_batched"], 3),
        "baseline_ratio_to_fifo": round(median["baseline"] / median["fifo_baseline"], 3),
        "jobs": args.jobs,
        "workers": args.workers,
        "batch": args.batch,
        "repeat": args.repeat,
        "load_average_before": load_before,
        "load_average_after": load_after,
    }


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs to drain (default 20000)")
    parser.add_argument(
        "--baseline-jobs",
        type=int,
        default=5_000,
        help="jobs for the one-at-a-time baseline (default 5000)",
    )
    parser.add_argument("--workers", type=int, default=4, help="concurrent workers (default 4)")
    parser.add_argument("--batch", type=int, default=256, help="jobs per claim (default 256)")
    parser.add_argument("--wakeups", type=int, default=200, help="wake-up samples (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="repeats; medians are printed")
    parser.add_argument("--database-url", help="server to create scratch databases on")
    parser.add_argument("--json", action="store_true", help="print a JSON object last")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args(sys.argv[1:])
    figures = asyncio.run(main(arguments))
    if arguments.json:
        print(json.dumps(figures))
