"""One checked drain of the queue benchmarks' backlog (scripts/bench_queue.py's loops,
scripts/bench_queue_costs.py's parts).

    rate = await drain_backlog(url, "pipelined", jobs=20_000, workers=4, batch=256, processes=2)
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from smuves_sync.models import ContentType
from smuves_sync.testing import queue_peers
from smuves_sync.testing.queue_loops import ALL_LOOPS, create_fifo_functions, run_team, team
from smuves_sync.testing.scratch import open_runs, seed_backlog

OWNERS = 20  # the backlog's owners: claims share the workers among owners too


async def drain_backlog(
    url: str,
    loop: str,
    *,
    jobs: int,
    workers: int,
    batch: int,
    processes: int,
    prepare: Callable[[], Awaitable[None]] | None = None,
    settles: bool = True,
) -> float:
    """Plant `jobs` no-op fetch jobs at `url` (nine types a portal, OWNERS owners), await
    `prepare` (a change to the database), and drain them with `processes` processes of
    `workers` workers (in this process when `processes` is 1) running the loop named `loop`
    (queue_loops.ALL_LOOPS); jobs per second. A drain that loses or repeats a job, or leaves a
    run open with its jobs done (unless not `settles`: a database without settling), ends the
    benchmark."""
    planted = await seed_backlog(url, portals=-(-jobs // len(ContentType)), owners=OWNERS)
    if loop.startswith("fifo_"):
        await create_fifo_functions(url)
    if prepare is not None:
        await prepare()
    if processes > 1:
        done, elapsed = await queue_peers.ours_in_processes(
            url, loop, processes=processes, workers=workers, batch=batch
        )
    else:
        async with team(url, workers) as members:
            start = time.perf_counter()
            done = await run_team(members, ALL_LOOPS[loop], batch)
            elapsed = time.perf_counter() - start
    if done != planted:
        raise SystemExit(f"drained {done} jobs of {planted}: the queue lost or repeated some")
    if settles and (unsettled := await open_runs(url)):
        raise SystemExit(f"{unsettled} runs are still open with every job finished")
    return planted / elapsed
