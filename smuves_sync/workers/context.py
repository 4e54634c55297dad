"""What a job handler is given: the claimed job and the process's shared resources.

A handler is ``async def handle(ctx: JobContext) -> None``. It finishes its job itself (the
completion belongs in the same transaction as its last write) and raises on failure; the
runner turns the exception into a retry, a park or a failure (see `workers.failures`), and
cancels the handler when the job's lease is lost or the worker shuts down. Whatever a handler
raises, even SystemExit, is the job's failure and never the worker's end (`contained`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from smuves_sync.db import Database
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import Job
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings


@dataclass(frozen=True)
class JobContext:
    """One claimed job and what working it needs."""

    job: Job
    db: Database  # unscoped, acting as smuves_worker
    settings: Settings
    limits: RateLimitRegistry  # one per process: a portal's budget is shared by its jobs
    worker_id: str

    def queue(self, db: Database | None = None) -> Queue:
        """The queue over `db` (a scoped transaction) or over the unscoped database."""
        return Queue(db or self.db, self.settings, worker_id=self.worker_id)


Handler = Callable[[JobContext], Coroutine[Any, Any, None]]


class HandlerEscaped(Exception):
    """A handler raised a BaseException that is not cancellation (SystemExit, say)."""


async def contained(handling: Awaitable[None]) -> None:
    """Await a handler so that nothing it raises can end the worker.

    asyncio re-raises a task's SystemExit out of the event loop, which would end the process;
    here it becomes an ordinary exception, and so the job's failure. Cancellation and Ctrl-C
    (KeyboardInterrupt) pass through.
    """
    try:
        await handling
    except (asyncio.CancelledError, KeyboardInterrupt, Exception):
        raise
    except BaseException as error:
        raise HandlerEscaped(f"the handler raised {type(error).__name__}: {error}") from error
