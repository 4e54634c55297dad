"""workers: which worker processes are alive (workers.sql, migrations/functions/workers.sql).

    seat = await worker_register(worker_db, WorkerSeat(...))   # -> WorkerPass (id, token)
    await worker_heartbeat(worker_db, seat, job_ids=[12, 13])  # False: the row is gone
    await worker_unregister(worker_db, seat)
    workers = await worker_list(db)                  # login role -> list[WorkerRow]
    live = await metrics_workers_live(db)            # any role with EXECUTE: a count
    waiting = await run_waiting_for_worker(db, [run.id for run in runs])  # -> set of ids

A worker's row is changed only with the token its registration returned (the database keeps
its hash), so one worker login cannot beat for, or remove, another's. A worker is alive
while seen within three of its heartbeat intervals (the SQL function worker_alive).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from psycopg.rows import scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import JobKind

# What the CLI and the dashboard say of a run that `run_waiting_for_worker` returns.
NO_WORKER = "waiting: no worker is running (start one with `smuves worker`)"


@dataclass(frozen=True, slots=True)
class WorkerSeat:
    """What a worker process says of itself when it registers."""

    name: str
    host: str
    pid: int
    kinds: tuple[JobKind, ...]
    concurrency: int
    heartbeat_every: timedelta
    # the one run it claims from (`smuves sync`'s own worker); None: any run
    run_id: int | None = None


@dataclass(frozen=True, slots=True)
class WorkerPass:
    """A registered worker's row id and the token that alone may change that row."""

    id: int
    token: uuid.UUID = field(repr=False)


@dataclass(frozen=True, slots=True)
class WorkerRow:
    """A registered worker as the operators see it."""

    id: int
    name: str
    host: str
    pid: int
    kinds: tuple[JobKind, ...]
    concurrency: int
    run_id: int | None
    heartbeat_every: timedelta
    started_at: datetime
    last_seen_at: datetime
    job_ids: tuple[int, ...]
    alive: bool


async def worker_register(
    db: Database, seat: WorkerSeat, *, now: datetime | None = None
) -> WorkerPass:
    """A new row for this worker; forgets rows silent for a day."""
    params = {
        "name": seat.name,
        "host": seat.host,
        "pid": seat.pid,
        "kinds": [str(kind) for kind in seat.kinds],
        "concurrency": seat.concurrency,
        "run_id": seat.run_id,
        "heartbeat_every": seat.heartbeat_every,
        "now": now,
    }
    return await db.only("worker_register", params, row=model_row(WorkerPass))


async def worker_heartbeat(
    db: Database, worker: WorkerPass, *, job_ids: Collection[int], now: datetime | None = None
) -> bool:
    """Mark the worker seen, holding `job_ids`; False when its row is gone (pruned)."""
    params = {"id": worker.id, "token": worker.token, "job_ids": sorted(job_ids), "now": now}
    return bool(await db.only("worker_heartbeat", params, row=scalar_row))


async def worker_unregister(db: Database, worker: WorkerPass) -> bool:
    """Remove the worker's row (a graceful stop); False when it was gone already."""
    params = {"id": worker.id, "token": worker.token}
    return bool(await db.only("worker_unregister", params, row=scalar_row))


async def worker_list(db: Database, *, now: datetime | None = None) -> list[WorkerRow]:
    """Every registered worker, live ones first, with whether it is alive at `now`."""
    return await db.all("worker_list", {"now": now}, row=model_row(WorkerRow))


async def metrics_workers_live(db: Database, *, now: datetime | None = None) -> int:
    """How many workers are alive."""
    return int(await db.only("metrics_workers_live", {"now": now}, row=scalar_row))


async def run_waiting_for_worker(
    db: Database, run_ids: Sequence[int], *, now: datetime | None = None
) -> set[int]:
    """Those of `run_ids` with a job that could be worked now and no live worker to claim it."""
    if not run_ids:
        return set()
    params = {"run_ids": list(run_ids), "now": now}
    return set(await db.all("run_waiting_for_worker", params, row=scalar_row))
