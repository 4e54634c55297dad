"""Benchmark the Postgres job queue: drain throughput and NOTIFY wake-up latency.

    .venv/bin/python scripts/bench_queue.py [--jobs 20000] [--workers 4] [--batch 64] [--json]

Throughput: N no-op fetch jobs are planted, then K concurrent workers (one process, one
pooled connection each, acting as smuves_worker) drain them through the real path — claim,
run the (no-op) handler, complete — and jobs/s is N over the wall time. It is measured twice,
side by side: the baseline claims and completes one job per round trip (`claim_next_job`,
`complete_job`), the measured path claims a batch (`claim_jobs`) and completes it in one call.

Wake-up latency: one idle worker waits on NOTIFY (falling back to polling); 200 times a job
is enqueued and committed, and the time from the commit returning to the handler starting
is recorded; p50 and p95 are printed.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL,
else the embedded PostgreSQL in a temporary directory. Every phase gets a fresh scratch
database, dropped afterwards. With --json the last line is one JSON object:
{"jobs_per_s": …, "wakeup_p50_ms": …, "wakeup_p95_ms": …, …}.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.embedded import embedded_server
from smuves_sync.db.scratch import scratch_database, seed_backlog
from smuves_sync.models import ContentType, Job, JobKind
from smuves_sync.queue import Queue, Wakeups
from smuves_sync.settings import Settings

FETCH = [JobKind.FETCH]
TYPES = len(ContentType)


async def noop_handler(job: Job) -> None:
    """The benchmark's job: nothing, so the queue is all that is measured."""


@asynccontextmanager
async def server(url: str | None) -> AsyncIterator[str]:
    """The server to create scratch databases on."""
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix="smvb") as tmp:
        async with embedded_server(Path(tmp) / "pg") as embedded:
            yield embedded


async def drain(url: str, jobs: int, workers: int, batch: int, settings: Settings) -> float:
    """Plant `jobs` jobs, drain them with `workers` workers; jobs per second.

    `batch` 0 is the one-job-per-round-trip baseline."""
    planted = await seed_backlog(url, portals=-(-jobs // TYPES))
    async with pool_for(url, role=DbRole.WORKER, min_size=workers, max_size=workers) as pool:

        async def worker(number: int) -> int:
            queue = Queue(Database(pool), settings, worker_id=f"bench-{number}")
            done = 0
            while True:
                if batch:
                    claimed = await queue.claim(FETCH, limit=batch)
                else:
                    one = await queue.db.job_claim_next(
                        queue.worker_id,
                        FETCH,
                        fetch_lease=queue.fetch_lease,
                        export_lease=queue.export_lease,
                    )
                    claimed = [one] if one else []
                if not claimed:
                    return done
                await asyncio.gather(*(noop_handler(job) for job in claimed))
                if batch:
                    finished = await queue.complete_many(claimed)
                else:
                    finished = [await queue.complete(job) for job in claimed]
                done += len(finished)

        start = time.perf_counter()
        counts = await asyncio.gather(*(worker(n) for n in range(workers)))
        elapsed = time.perf_counter() - start
    if sum(counts) != planted:
        raise SystemExit(
            f"drained {sum(counts)} jobs of {planted}: the queue lost or repeated some"
        )
    return planted / elapsed


async def wakeup_latencies(url: str, samples: int, settings: Settings) -> list[float]:
    """Milliseconds from an enqueue's commit to the idle worker's handler starting."""
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
        async with Wakeups(worker_pool.conninfo, kinds=FETCH) as wakeups:
            await wakeups.ready()
            task = asyncio.create_task(idle_worker(wakeups))
            for portal_id in range(1, portals + 1):
                run = await admin.run_create(portal_id, JobKind.FETCH, [ContentType.SITE_PAGE])
                await idle.wait()  # the worker is waiting, not claiming
                idle.clear()
                handled.clear()
                job = await admin.job_enqueue(run.id, ContentType.SITE_PAGE)
                committed = time.perf_counter()
                assert job is not None
                await handled.wait()
                latencies.append((started[job.id] - committed) * 1000)
            stop.set()
            wakeups_task_done = task
            await wakeups_task_done
        return latencies


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0 to 100) by the inclusive method."""
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def main(args: argparse.Namespace) -> dict[str, float]:
    """Run the three phases and print the figures."""
    settings = Settings()
    async with server(args.database_url or settings.database_url) as server_url:
        async with scratch_database(server_url, prefix="smuves_bench") as url:
            baseline = await drain(url, args.baseline_jobs, args.workers, 0, settings)
        print(
            f"baseline  one job per round trip : {baseline:8.0f} jobs/s "
            f"({args.baseline_jobs} jobs, {args.workers} workers)"
        )
        async with scratch_database(server_url, prefix="smuves_bench") as url:
            batched = await drain(url, args.jobs, args.workers, args.batch, settings)
        print(
            f"batched   claim/complete {args.batch:>4} jobs: {batched:8.0f} jobs/s "
            f"({args.jobs} jobs, {args.workers} workers)"
        )
        async with scratch_database(server_url, prefix="smuves_bench") as url:
            latencies = await wakeup_latencies(url, args.wakeups, settings)
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    print(
        f"wake-up   commit -> handler start  : p50 {p50:.2f} ms, p95 {p95:.2f} ms, "
        f"max {max(latencies):.2f} ms ({len(latencies)} jobs)"
    )
    return {
        "jobs_per_s": round(batched, 1),
        "wakeup_p50_ms": round(p50, 3),
        "wakeup_p95_ms": round(p95, 3),
        "baseline_jobs_per_s": round(baseline, 1),
        "jobs": args.jobs,
        "workers": args.workers,
        "batch": args.batch,
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
    parser.add_argument("--batch", type=int, default=64, help="jobs per claim (default 64)")
    parser.add_argument("--wakeups", type=int, default=200, help="wake-up samples (default 200)")
    parser.add_argument("--database-url", help="server to create scratch databases on")
    parser.add_argument("--json", action="store_true", help="print a JSON object last")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args(sys.argv[1:])
    figures = asyncio.run(main(arguments))
    if arguments.json:
        print(json.dumps(figures))
