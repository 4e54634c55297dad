"""A runner's row in ``workers``: how operators (and /metrics) know that a worker is alive.

The runner registers at its first periodic duties, heartbeats among them on the cadence of
its job heartbeats (a third of the shortest lease of its kinds: a worker counts as dead
after three missed heartbeats, about when its jobs' leases would run out and another worker
could take them over), and removes its row when it stops gracefully. A killed worker's row
stays, dead, until a registration a day later forgets it.

The row is changed only with the token its registration returned; a heartbeat that finds
the row gone (forgotten after a long pause) registers again.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Collection, Iterable
from datetime import timedelta
from typing import Protocol

from smuves_sync.db import Database
from smuves_sync.db.workers import (
    WorkerPass,
    WorkerSeat,
    worker_heartbeat,
    worker_register,
    worker_unregister,
)
from smuves_sync.errors import DatabaseError
from smuves_sync.models import JobKind
from smuves_sync.queue import Queue
from smuves_sync.workers.duties import Periodic

log = logging.getLogger(__name__)

# The bounds worker_register accepts.
_FASTEST = timedelta(seconds=1)
_SLOWEST = timedelta(minutes=10)


def heartbeat_interval(leases: Iterable[timedelta]) -> timedelta:
    """A third of the shortest lease (as each job's heartbeat), within what the table takes."""
    return min(max(min(leases) / 3, _FASTEST), _SLOWEST)


class Working(Protocol):
    """What the presence asks of its runner: the jobs it works now."""

    @property
    def active_jobs(self) -> tuple[int, ...]: ...


class Presence:
    """Registers, heartbeats and removes one runner's row."""

    def __init__(self, seat: WorkerSeat, in_hand: Callable[[], Collection[int]]) -> None:
        self.seat = seat
        self._in_hand = in_hand
        self._pass: WorkerPass | None = None

    @classmethod
    def of_runner(
        cls,
        queue: Queue,
        kinds: Collection[JobKind],
        concurrency: int,
        run_id: int | None,
        runner: Working,
    ) -> Presence:
        """The presence of a runner of this process that claims through `queue`."""
        seat = WorkerSeat(
            name=queue.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            kinds=tuple(sorted(set(kinds))),
            concurrency=concurrency,
            heartbeat_every=heartbeat_interval(queue.lease(kind) for kind in kinds),
            run_id=run_id,
        )
        return cls(seat, lambda: runner.active_jobs)

    @property
    def duty(self) -> Periodic:
        """The heartbeat as one of the runner's periodic duties."""
        return (self.seat.heartbeat_every.total_seconds(), self.heartbeat)

    @property
    def worker_row_id(self) -> int | None:
        """The id of this runner's row (None until registered)."""
        return None if self._pass is None else self._pass.id

    async def heartbeat(self, db: Database) -> None:
        """Register at the first call; later calls mark the row seen with the jobs in hand."""
        if self._pass is not None and await worker_heartbeat(
            db, self._pass, job_ids=self._in_hand()
        ):
            return
        if self._pass is not None:
            log.warning("worker row %s was forgotten; registering again", self._pass.id)
        self._pass = await worker_register(db, self.seat)
        log.info("worker %s registered as worker row %s", self.seat.name, self._pass.id)

    async def leave(self, db: Database) -> None:
        """Remove the row; database trouble is logged (the row then counts as dead soon)."""
        if self._pass is None:
            return
        try:
            await worker_unregister(db, self._pass)
        except DatabaseError as error:
            log.warning("worker row %s not removed: %s", self._pass.id, error)
        self._pass = None
