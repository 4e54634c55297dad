"""The queue against its peer: drains of no-op jobs through pgqueuer beside ours, the workers
of each in processes of their own (scripts/bench_queue.py --peers).

    done, seconds = await ours_in_processes(url, "pipelined", processes=2, workers=4, batch=10)
    rate = await pgqueuer_drain(server_url, jobs=20_000, processes=2, workers=4, batch=10)
    latencies = await pgqueuer_wakeups(server_url, samples=200)

A drain in processes starts each process (`python -m smuves_sync.testing.queue_peers`, given
its spec on stdin), waits until every one has opened its connections and says `ready`, then
tells them all `go` at once; each drains until the queue is empty and reports how many jobs
it completed and when it finished (the system-wide monotonic clock), so that neither the
interpreters' start nor their exit is timed. The rate is the jobs over the time from `go` to
the last to finish.

pgqueuer runs as its own benchmark's drain runs it (`QueueManager.run(batch_size=…,
mode=drain)`, one queue manager and one connection per worker, an async no-op entrypoint) and
on uvloop, as its command line and its benchmark run it; ours runs on asyncio's own loop, as
`smuves worker` does. Its driver is asyncpg, pgqueuer's default: with its psycopg driver (1.6)
a drain ran 3.5 to 5.7 times slower here (2026-12-01), its listener and its queries sharing
one connection, which psycopg's `notifies()` holds until a notification comes or a second
passes; that would flatter ours. Its jobs live in a scratch database of their own, its schema
installed by `Queries.install`. Its wake-up is measured in this process, on asyncio's loop, as
ours is.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any

import asyncpg
import psycopg
import uvloop
from pgqueuer import Queries, QueueManager
from pgqueuer.db import AsyncpgDriver, PsycopgDriver
from pgqueuer.models import Job as PeerJob
from pgqueuer.types import QueueExecutionMode
from psycopg.conninfo import conninfo_to_dict

from smuves_sync.testing.queries import testing_queries
from smuves_sync.testing.queue_loops import ALL_LOOPS, run_team, team
from smuves_sync.testing.scratch import scratch_database

ENTRYPOINT = "noop"
WAKEUP_SECONDS = 60.0  # an enqueued job not handled by then: the listener is deaf
DRAIN_SECONDS = 600.0  # a process that says nothing for so long is stuck
PEER = "pgqueuer"


@dataclass(frozen=True)
class Spec:
    """What one worker process runs: `system` (ours or pgqueuer), the loop, its workers."""

    system: str
    url: str
    workers: int
    batch: int
    loop: str = "pipelined"


# -- the peer ---------------------------------------------------------------------------------


async def peer_connection(url: str) -> asyncpg.Connection:
    """An asyncpg connection to the database of the libpq conninfo `url`."""
    params = conninfo_to_dict(url)
    port = params.get("port")
    return await asyncpg.connect(
        host=params.get("host"),
        port=int(str(port)) if port else None,
        user=params.get("user"),
        password=params.get("password"),
        database=params.get("dbname"),
    )


async def plant_peer_jobs(url: str, jobs: int) -> None:
    """Install pgqueuer's schema in the database at `url` and enqueue `jobs` no-op jobs."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        queries = Queries(PsycopgDriver(conn))
        await queries.install()
        if jobs:
            await queries.enqueue([ENTRYPOINT] * jobs, [None] * jobs, [0] * jobs)
            # as the seeded backlog of ours: a live queue has statistics
            await conn.execute(testing_queries()["peer_analyze"])


@asynccontextmanager
async def peer_managers(
    url: str, workers: int
) -> AsyncIterator[tuple[list[QueueManager], list[int]]]:
    """`workers` pgqueuer queue managers on a connection each, and the count their no-op
    entrypoint keeps (one cell, shared)."""
    done = [0]
    async with AsyncExitStack() as stack:
        managers = []
        for _ in range(workers):
            conn = await peer_connection(url)
            stack.push_async_callback(conn.close)
            manager = QueueManager(Queries(AsyncpgDriver(conn)))

            @manager.entrypoint(ENTRYPOINT)
            async def noop(job: PeerJob) -> None:
                done[0] += 1

            managers.append(manager)
        yield managers, done


async def pgqueuer_drain(
    server_url: str, *, jobs: int, processes: int, workers: int, batch: int
) -> float:
    """pgqueuer's drain of `jobs` no-op jobs by `processes` processes of `workers` workers in
    a fresh scratch database; jobs per second."""
    async with scratch_database(server_url, prefix="smuves_peer", migrated=False) as url:
        await plant_peer_jobs(url, jobs)
        done, elapsed = await drain_in_processes(Spec(PEER, url, workers, batch), processes)
    if done != jobs:
        raise SystemExit(f"pgqueuer drained {done} jobs of {jobs}")
    return jobs / elapsed


async def pgqueuer_wakeups(server_url: str, samples: int) -> list[float]:
    """Milliseconds from a pgqueuer enqueue's commit to its idle worker's handler starting."""
    async with (
        scratch_database(server_url, prefix="smuves_peer", migrated=False) as url,
        await psycopg.AsyncConnection.connect(url, autocommit=True) as conn,
    ):
        await plant_peer_jobs(url, 0)
        enqueuer = Queries(PsycopgDriver(conn))
        worker = await peer_connection(url)
        manager = QueueManager(Queries(AsyncpgDriver(worker)))
        started: dict[int, float] = {}
        handled = asyncio.Event()

        @manager.entrypoint(ENTRYPOINT)
        async def noop(job: PeerJob) -> None:
            started[job.id] = time.perf_counter()
            handled.set()

        task = asyncio.create_task(manager.run())
        latencies: list[float] = []
        try:
            for sample in range(samples + 1):
                # a moment for the worker to find the queue empty and wait on its listener
                await asyncio.sleep(0.02)
                handled.clear()
                [job_id] = await enqueuer.enqueue(ENTRYPOINT, None)
                committed = time.perf_counter()
                await asyncio.wait_for(handled.wait(), WAKEUP_SECONDS)
                if sample:  # the first warms the worker up
                    latencies.append((started[job_id] - committed) * 1000)
        finally:
            manager.shutdown.set()
            await task
            await worker.close()
        return latencies


# -- workers in processes ---------------------------------------------------------------------


async def ours_in_processes(
    url: str, loop: str, *, processes: int, workers: int, batch: int
) -> tuple[int, float]:
    """Drain the backlog planted at `url` with `processes` processes of `workers` of our
    workers running `loop` (a name of queue_loops.ALL_LOOPS): (jobs completed, seconds)."""
    return await drain_in_processes(Spec("ours", url, workers, batch, loop), processes)


async def drain_in_processes(spec: Spec, processes: int) -> tuple[int, float]:
    """Run `processes` worker processes of `spec` from one `go`: (jobs completed, seconds)."""
    children = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(processes)
    ]
    try:
        # on stdin, not the command line, which anyone on the host may read: the URL may hold
        # a password
        for child in children:
            assert child.stdin is not None
            child.stdin.write(json.dumps(asdict(spec)).encode() + b"\n")
        for child in children:
            await expect_line(child, "ready")
        start = time.monotonic()
        for child in children:
            assert child.stdin is not None
            child.stdin.write(b"go\n")
        reports = [json.loads(await expect_line(child, "{")) for child in children]
        for child in children:
            if await child.wait():
                raise SystemExit(f"a {spec.system} worker process exited with {child.returncode}")
    finally:
        for child in children:
            if child.returncode is None:
                child.kill()
                await child.wait()
    done = sum(report["done"] for report in reports)
    return done, max(report["finished"] for report in reports) - start


async def expect_line(child: asyncio.subprocess.Process, starts: str) -> str:
    """The next line of `child`'s output, which must start with `starts`."""
    assert child.stdout is not None
    line = (await asyncio.wait_for(child.stdout.readline(), DRAIN_SECONDS)).decode()
    if not line.startswith(starts):
        code = await child.wait()
        raise SystemExit(f"a worker process said {line!r} and exited with {code}")
    return line


async def child_main(spec: Spec) -> dict[str, Any]:
    """One worker process: open its connections, say `ready`, drain after `go`, report."""
    async with AsyncExitStack() as stack:
        if spec.system == PEER:
            managers, done = await stack.enter_async_context(peer_managers(spec.url, spec.workers))
        else:
            workers = await stack.enter_async_context(team(spec.url, spec.workers))
        print("ready", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        if spec.system == PEER:
            drains = (
                manager.run(batch_size=spec.batch, mode=QueueExecutionMode.drain)
                for manager in managers
            )
            await asyncio.gather(*drains)
            completed = done[0]
        else:
            completed = await run_team(workers, ALL_LOOPS[spec.loop], spec.batch)
        return {"done": completed, "finished": time.monotonic()}


if __name__ == "__main__":
    child = Spec(**json.loads(sys.stdin.readline()))
    # pgqueuer runs on uvloop, as its command line (`pgq run`) and its benchmark run it;
    # ours on asyncio's own loop, as `smuves worker` does.
    run = uvloop.run if child.system == PEER else asyncio.run
    print(json.dumps(run(child_main(child))), flush=True)
