"""Benchmark the Postgres job queue: drain throughput and NOTIFY wake-up latency.

    .venv/bin/python scripts/bench_queue.py [--jobs 20000] [--workers 4] [--batch 256]
                                            [--processes K] [--peers] [--repeat 3] [--json]

Throughput: N no-op fetch jobs are planted (their portals dealt among 20 owners, placed in
line as enqueue_job places them), then K concurrent workers (each holding one connection of
a pool, `Database.dedicated`, acting as smuves_worker; in one process, or in --processes P
processes of K each) drain them through the real path — claim, run the (no-op) handler,
complete — and jobs/s is N over the wall time. A worker awaits the handlers of its batch in
turn: with no-op handlers, a task per job would measure asyncio
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
alternates between repeats): the `fifo` figures, and today's as a ratio of them. The fifo
loops' commits wait for the WAL flush, as they did; today's claims and completions of these
fetch jobs do not (migrations/README.md, "How the queue commits").

Each call has a fixed cost (here most of a millisecond of server time per queue call, and a
WAL flush of a few milliseconds for each commit that waits for one), which a batch shares out:
the default batch is 256; try --batch 64 to see the difference.

Wake-up latency: one idle worker waits on NOTIFY (falling back to polling); 200 times a job
is enqueued and committed, and the time from the commit returning to the handler starting
is recorded; p50 and p95 are printed.

--peers: the peer, pgqueuer (the `bench` extra), drains the same number of no-op jobs on the same
server, a fresh scratch database each time, its workers in processes as its own benchmark runs
them (smuves_sync/testing/queue_peers.py): 1 process at batch 256, and P processes (--processes,
else 2) at batches 256 and 10, each right before or after ours at the same processes, workers
and batch (complete-and-claim with fairness and the cap, today's claim); at batch 10 also ours
as the worker's runner works its slots (`slots`: claim 10, then complete each job alone, a
round trip and a settle a job, as the runner completes jobs that finish at their own times;
no worker runs complete-and-claim); at batch 256 also the claim and completion of before fair
claims (`fifo_pipelined`, in the same P processes: what a claim that shares nothing among
portals and settles no run early gives on this machine beside pgqueuer); then ours one job
at a time in P processes, and pgqueuer's wake-up. A ratio to pgqueuer is the median of the
repeats' ratios of the pairs, not the quotient of the medians. A drain that loses or repeats
a job, or leaves a run open with all its jobs done, ends the benchmark with an error.

Every measurement is repeated --repeat times, each on a fresh scratch database (created,
migrated, dropped); the figures printed last are the medians. Other work on the machine moves
the figures a lot: the load average is printed before and after.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL,
else the embedded PostgreSQL in a temporary directory. With --json the last line is one JSON
object: {"jobs_per_s": …, "wakeup_p50_ms": …, "wakeup_p95_ms": …, …} (medians; jobs_per_s is
the pipelined loop; fifo_jobs_per_s and ratio_to_fifo beside it; with --peers
peer_pgqueuer_2p_jobs_per_s_batch_10, jobs_per_s_batch_10, ratio_to_pgqueuer_2p_batch_10, the
same at batch 256, slots_jobs_per_s_batch_10 and slots_ratio_to_pgqueuer_2p_batch_10,
fifo_jobs_per_s_batch_256, fifo_ratio_to_pgqueuer_2p_batch_256 and ratio_to_fifo_2p_batch_256,
peer_pgqueuer_1p_jobs_per_s_batch_256, one_at_a_time_jobs_per_s and
peer_pgqueuer_wakeup_p95_ms, "2p" being the processes).
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

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.jobs import job_enqueue
from smuves_sync.db.runs import run_create
from smuves_sync.models import ContentType, JobKind
from smuves_sync.queue import Queue, Wakeups
from smuves_sync.settings import Settings
from smuves_sync.testing import queue_peers
from smuves_sync.testing.queue_drains import drain_backlog
from smuves_sync.testing.queue_loops import (
    FETCH,
    LOOPS,
    noop_handler,
)
from smuves_sync.testing.scratch import scratch_database, scratch_server, seed_backlog

PEER_BATCHES = (256, 10)
SLOTS_BATCH = 10  # the free slots a worker's runner claims, as production runs it
FIFO_BATCH = 256  # where the claim of before fair claims is drained in processes too


async def ours(server_url: str, loop: str, jobs: int, args: argparse.Namespace, **at: int) -> float:
    """`drain` in a fresh scratch database, at the arguments' workers, batch and processes
    unless `at` gives others."""
    batch, processes = at.get("batch", args.batch), at.get("processes", args.processes or 1)
    async with scratch_database(server_url, prefix="smuves_bench") as url:
        return await drain_backlog(
            url, loop, jobs=jobs, workers=args.workers, batch=batch, processes=processes
        )


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


Figures = dict[str, list[float]]
Measure = Callable[[], Awaitable[float]]


async def take_turns(
    figures: Figures, repeat: int, turns: list[tuple[str, Measure]], size: int
) -> None:
    """Measure each of `turns` once, in its order on odd repeats and reversed on even ones."""
    for label, measure in turns if repeat % 2 else turns[::-1]:
        rate = await measure()
        figures.setdefault(label, []).append(rate)
        print(f"  #{repeat} {label:<24} {rate:8.0f} jobs/s ({size} jobs)")


async def measure_ours(
    server_url: str, args: argparse.Namespace, figures: Figures, repeat: int
) -> None:
    """One repeat of the loops, each beside the same loop before fair claims, and the wake-up."""
    sizes = {"baseline": args.baseline_jobs, "batched": args.jobs, "pipelined": args.jobs}
    # The loops take turns inside each repeat, so that a burst of other work on the
    # machine hits all of them rather than one.
    for name in LOOPS:

        def measure(loop: str, size: int = sizes[name]) -> Measure:
            return lambda: ours(server_url, loop, size, args)

        turns = [(name, measure(name)), (f"fifo_{name}", measure(f"fifo_{name}"))]
        await take_turns(figures, repeat, turns, sizes[name])
    async with scratch_database(server_url, prefix="smuves_bench") as url:
        latencies = await wakeup_latencies(url, args.wakeups)
    record_wakeups(figures, "", repeat, latencies)


def record_wakeups(figures: Figures, who: str, repeat: int, latencies: list[float]) -> None:
    """Add a repeat's wake-up p50 and p95 to `figures` and print them."""
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    figures.setdefault(f"{who}p50", []).append(p50)
    figures.setdefault(f"{who}p95", []).append(p95)
    print(
        f"  #{repeat} {who}wake-up p50 {p50:.2f} ms, p95 {p95:.2f} ms, "
        f"max {max(latencies):.2f} ms ({len(latencies)} jobs)"
    )


async def measure_peers(
    server_url: str, args: argparse.Namespace, figures: Figures, repeat: int
) -> None:
    """One repeat of the comparison with pgqueuer: its drains, each beside ours, its wake-up."""
    procs, jobs = args.processes or 2, args.jobs

    def peer(processes: int, batch: int) -> Measure:
        return lambda: queue_peers.pgqueuer_drain(
            server_url, jobs=jobs, processes=processes, workers=args.workers, batch=batch
        )

    def mine(batch: int, loop: str = "pipelined") -> Measure:
        return lambda: ours(server_url, loop, jobs, args, batch=batch, processes=procs)

    for batch in PEER_BATCHES:
        turns = [
            (f"ours_{procs}p_batch_{batch}", mine(batch)),
            (f"pgqueuer_{procs}p_batch_{batch}", peer(procs, batch)),
        ]
        if batch == SLOTS_BATCH:
            turns.append((f"ours_{procs}p_slots_batch_{batch}", mine(batch, "slots")))
        if batch == FIFO_BATCH:
            turns.append((f"ours_{procs}p_fifo_batch_{batch}", mine(batch, "fifo_pipelined")))
        await take_turns(figures, repeat, turns, jobs)
    if procs > 1:  # else measured above
        await take_turns(figures, repeat, [("pgqueuer_1p_batch_256", peer(1, 256))], jobs)
    one = lambda: ours(server_url, "baseline", args.baseline_jobs, args, processes=procs)  # noqa: E731
    await take_turns(figures, repeat, [(f"ours_{procs}p_one_at_a_time", one)], args.baseline_jobs)
    latencies = await queue_peers.pgqueuer_wakeups(server_url, args.wakeups)
    record_wakeups(figures, "pgqueuer_", repeat, latencies)


def peer_figures(figures: Figures, procs: int) -> dict[str, float]:
    """The --peers figures: medians, and the medians of the repeats' ratios of each pair."""
    median = {name: statistics.median(values) for name, values in figures.items()}
    out: dict[str, float] = {
        "processes": procs,
        "peer_pgqueuer_1p_jobs_per_s_batch_256": round(median["pgqueuer_1p_batch_256"], 1),
        "one_at_a_time_jobs_per_s": round(median[f"ours_{procs}p_one_at_a_time"], 1),
        "peer_pgqueuer_wakeup_p50_ms": round(median["pgqueuer_p50"], 3),
        "peer_pgqueuer_wakeup_p95_ms": round(median["pgqueuer_p95"], 3),
    }

    def pair(batch: int, loop: str = "") -> None:
        """Ours (`loop`: another than complete-and-claim) beside pgqueuer at `batch`."""
        prefix = f"{loop}_" if loop else ""
        mine, theirs = (
            figures[f"ours_{procs}p_{prefix}batch_{batch}"],
            figures[f"pgqueuer_{procs}p_batch_{batch}"],
        )
        out[f"{prefix}jobs_per_s_batch_{batch}"] = round(statistics.median(mine), 1)
        ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
        out[f"{prefix}ratio_to_pgqueuer_{procs}p_batch_{batch}"] = round(
            statistics.median(ratios), 3
        )

    for batch in PEER_BATCHES:
        pair(batch)
        out[f"peer_pgqueuer_{procs}p_jobs_per_s_batch_{batch}"] = round(
            statistics.median(figures[f"pgqueuer_{procs}p_batch_{batch}"]), 1
        )
    pair(SLOTS_BATCH, "slots")
    pair(FIFO_BATCH, "fifo")
    fair = figures[f"ours_{procs}p_batch_{FIFO_BATCH}"]
    fifo = figures[f"ours_{procs}p_fifo_batch_{FIFO_BATCH}"]
    ratios = [a / b for a, b in zip(fair, fifo, strict=True)]
    out[f"ratio_to_fifo_{procs}p_batch_{FIFO_BATCH}"] = round(statistics.median(ratios), 3)
    return out


def print_peers(peers: dict[str, float], args: argparse.Namespace) -> None:
    """The comparison with pgqueuer, in words."""
    procs = int(peers["processes"])
    print(f"against pgqueuer ({args.workers} workers a process, {args.jobs} no-op jobs):")
    for batch in PEER_BATCHES:
        mine, theirs = (
            peers[f"jobs_per_s_batch_{batch}"],
            peers[f"peer_pgqueuer_{procs}p_jobs_per_s_batch_{batch}"],
        )
        ratio = peers[f"ratio_to_pgqueuer_{procs}p_batch_{batch}"]
        print(
            f"{f'batch {batch}, {procs} processes':<33}: ours {mine:8.0f}, "
            f"pgqueuer {theirs:8.0f} jobs/s ({ratio:.2f}x)"
        )
    slots = peers[f"slots_jobs_per_s_batch_{SLOTS_BATCH}"]
    ratio = peers[f"slots_ratio_to_pgqueuer_{procs}p_batch_{SLOTS_BATCH}"]
    print(
        f"{f'ours as a runner, {SLOTS_BATCH} slots':<33}: ours {slots:8.0f} jobs/s "
        f"({ratio:.2f}x pgqueuer's batch {SLOTS_BATCH})"
    )
    fifo = peers[f"fifo_jobs_per_s_batch_{FIFO_BATCH}"]
    to_peer = peers[f"fifo_ratio_to_pgqueuer_{procs}p_batch_{FIFO_BATCH}"]
    to_fifo = peers[f"ratio_to_fifo_{procs}p_batch_{FIFO_BATCH}"]
    print(
        f"{f'before fair claims, batch {FIFO_BATCH}':<33}: fifo {fifo:8.0f} jobs/s "
        f"({to_peer:.2f}x pgqueuer; ours {to_fifo:.2f}x of it)"
    )
    one_process = peers["peer_pgqueuer_1p_jobs_per_s_batch_256"]
    print(f"{'batch 256, pgqueuer 1 process':<33}: {one_process:8.0f} jobs/s")
    one_at_a_time = peers["one_at_a_time_jobs_per_s"]
    print(f"{f'ours one at a time, {procs} processes':<33}: {one_at_a_time:8.0f} jobs/s")
    p50, p95 = peers["peer_pgqueuer_wakeup_p50_ms"], peers["peer_pgqueuer_wakeup_p95_ms"]
    print(f"{'pgqueuer wake-up':<33}: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


async def main(args: argparse.Namespace) -> dict[str, float]:
    """Run every measurement --repeat times and print the figures and their medians."""
    figures: Figures = {}
    load_before = load_average()
    procs = args.processes or 1
    print(f"load average {load_before}; {procs} x {args.workers} workers, batch {args.batch}")
    async with scratch_server(args.database_url or Settings().database_url) as server_url:
        for repeat in range(1, args.repeat + 1):
            await measure_ours(server_url, args, figures, repeat)
            if args.peers:
                await measure_peers(server_url, args, figures, repeat)
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
    peers = peer_figures(figures, args.processes or 2) if args.peers else {}
    if peers:
        print_peers(peers, args)
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
        **peers,
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
    parser.add_argument("--workers", type=int, default=4, help="workers a process (default 4)")
    parser.add_argument("--batch", type=int, default=256, help="jobs per claim (default 256)")
    parser.add_argument(
        "--processes",
        type=int,
        help="worker processes, each with --workers workers (default 1; 2 for --peers)",
    )
    parser.add_argument(
        "--peers", action="store_true", help="also drain the same jobs through pgqueuer"
    )
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
