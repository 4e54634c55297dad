"""The worker runner: claim jobs up to the free slots, run their handlers, keep their leases.

    runner = Runner(Database(worker_pool), settings, kinds=[JobKind.FETCH], concurrency=4,
                    wakeups_conninfo=worker_pool.conninfo)
    loop.add_signal_handler(signal.SIGTERM, runner.request_stop)
    stats = await runner.run()

- Between claims, the periodic duties (`workers.duties`): reconcile (settle runs whose jobs
  all finished) at start and every ``reconcile_interval_seconds``, record the process's
  HubSpot request counts (and once more when it stops), heartbeat the runner's row in
  ``workers`` (`workers.presence`; removed when it stops), fire due schedules.
- Claim up to the free slots (or only one run's jobs, for `smuves sync`), oldest first.
- Idle: wait for a NOTIFY wake-up, a finished job or the poll interval, whichever is first.
  `Wakeups` re-LISTENs after a reconnect; polling covers whatever a NOTIFY missed.
- Each job gets a heartbeat task that extends its lease every lease/3. A heartbeat that
  finds the lease taken over cancels the handler: it must not write anything more.
- The handler's exception becomes a retry with backoff, a park (daily limit; a token under a
  key this process lacks, logged once a portal), a failure, or its whole run's (`failures`).
- `request_stop` (SIGTERM): stop claiming, let running jobs finish for
  ``shutdown_grace_seconds`` (not at all with `at_once`, or once it is asked again so), then
  cancel the rest and hand them back (`release`: no attempt spent, cursor kept) before
  returning.
- Database trouble (a restart, a dropped connection) is logged and retried with backoff; the
  pool replaces dead connections, so the runner goes on when the server is back.
- No single row ends the loop: a periodic duty or a claim that fails unexpectedly (a row this
  code cannot read) is logged with its traceback and tried again later, and whatever a
  handler raises, even SystemExit, becomes that job's failure.
- ``burst``: return once nothing is claimable and nothing runs. ``until``: an async predicate
  checked when idle (`smuves sync` stops when its run has settled).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from smuves_sync.db import Database
from smuves_sync.errors import DatabaseError, DatabaseUnavailable, LeaseLost, TokenKeyMissing
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import Job, JobKind, JobStatus
from smuves_sync.queue import Queue, Wakeups, default_worker_id
from smuves_sync.settings import Settings
from smuves_sync.workers.context import Handler, JobContext, contained
from smuves_sync.workers.duties import Duties, Periodic
from smuves_sync.workers.export import handle_export
from smuves_sync.workers.failures import FailRun, Park, outcome_for
from smuves_sync.workers.fetch import handle_fetch
from smuves_sync.workers.hubspot_minutes import PROCESS_MINUTES
from smuves_sync.workers.presence import Presence
from smuves_sync.workers.push import handle_push

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_HANDLERS: Mapping[JobKind, Handler] = {
    JobKind.FETCH: handle_fetch,
    JobKind.EXPORT: handle_export,
    JobKind.PUSH: handle_push,
}

_DB_RETRY_FIRST = 0.5
_DB_RETRY_MAX = 10.0
# Tries of a queue write (fail, park, release) through database trouble before giving up.
_PERSIST_TRIES = 6
# After the grace period, how long hand-backs (release) may take before the runner returns.
_RELEASE_TIMEOUT = 15.0


@dataclass(slots=True)
class RunnerStats:
    """What a runner did, for logs and the CLI."""

    claim_rounds: int = 0
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    parked: int = 0
    released: int = 0
    lost: int = 0
    errors: list[str] = field(default_factory=list)


class Runner:
    """Runs jobs of `kinds` with at most `concurrency` at once until stopped."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        *,
        kinds: Sequence[JobKind],
        concurrency: int,
        burst: bool = False,
        run_id: int | None = None,
        until: Callable[[], Awaitable[bool]] | None = None,
        worker_id: str | None = None,
        handlers: Mapping[JobKind, Handler] = DEFAULT_HANDLERS,
        periodic: Sequence[Periodic] = (),
        wakeups_conninfo: str | None = None,
        limits: RateLimitRegistry | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.db = db
        self.settings = settings
        self.kinds = tuple(kinds)
        self.concurrency = concurrency
        self.burst = burst
        self.run_id = run_id
        self.until = until
        self.worker_id = worker_id or default_worker_id(settings.worker_id)
        self.handlers = handlers
        self.wakeups_conninfo = wakeups_conninfo
        self.limits = limits or RateLimitRegistry()
        self.stats = RunnerStats()
        self.queue = Queue(db, settings, worker_id=self.worker_id)
        self.presence = Presence.of_runner(self.queue, self.kinds, concurrency, run_id, self)
        self.duties = Duties(settings, [self.presence.duty, *periodic])
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._at_once = asyncio.Event()
        self._releasing = False
        self._active: dict[int, asyncio.Task[None]] = {}
        self._handler_tasks: dict[int, asyncio.Task[None]] = {}
        self._db_delay = _DB_RETRY_FIRST
        self._db_trouble = False
        self._key_missing_told: set[int] = set()  # portals whose missing key was logged

    # -- control --------------------------------------------------------------------------

    def request_stop(self, *, at_once: bool = False) -> None:
        """Stop claiming; running jobs get the grace period (none `at_once`), then are handed
        back."""
        if not self._stopping.is_set():
            log.info("worker %s stopping", self.worker_id)
        self._stopping.set()
        if at_once:
            self._at_once.set()
        self._wake.set()

    @property
    def active_jobs(self) -> tuple[int, ...]:
        """Ids of the jobs this runner is working now."""
        return tuple(self._active)

    async def run(self) -> RunnerStats:
        """Work until stopped (or, with `burst` / `until`, until there is nothing left)."""
        loop = asyncio.get_running_loop()
        async with contextlib.AsyncExitStack() as stack:
            if self.wakeups_conninfo is not None:
                wakeups = await stack.enter_async_context(
                    Wakeups(self.wakeups_conninfo, kinds=self.kinds)
                )
                forward = asyncio.create_task(self._forward(wakeups), name="smuves-wake")
                stack.callback(forward.cancel)
            while not self._stopping.is_set():
                self._wake.clear()
                await self.duties.run_due(self.db, loop.time(), self._database_lost)
                claimed = await self._claim()
                for job in claimed:
                    self._start(job)
                idle = not claimed and not self._active and not self._db_trouble
                if idle and await self._finished():
                    break
                if self._db_trouble:
                    pause = self._db_delay
                else:
                    until_duty = max(self.duties.next_due() - loop.time(), 0.01)
                    pause = min(self.settings.poll_interval_seconds, until_duty)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), pause)
            await self._drain()
        await PROCESS_MINUTES.flush_quietly(self.db)
        await self.presence.leave(self.db)
        return self.stats

    # -- the loop's steps -----------------------------------------------------------------

    def _database_lost(self, what: str, error: Exception) -> None:
        if not self._db_trouble:
            log.warning("database unavailable while %s (%s); retrying", what, error)
        self._db_trouble = True
        self._db_delay = min(self._db_delay * 2, _DB_RETRY_MAX)

    def _database_back(self) -> None:
        if self._db_trouble:
            log.info("database reachable again")
        self._db_trouble = False
        self._db_delay = _DB_RETRY_FIRST

    async def _forward(self, wakeups: Wakeups) -> None:
        while True:
            if await wakeups.wait(3600):
                self._wake.set()

    async def _claim(self) -> list[Job]:
        free = self.concurrency - len(self._active)
        if free <= 0 or self._stopping.is_set():
            return []
        # A run holds jobs of its one kind: the run, not the kinds, says what to claim.
        kinds = self.kinds if self.run_id is None else None
        try:
            jobs = await self.queue.claim(kinds, limit=free, run_id=self.run_id)
        except DatabaseUnavailable as error:
            self._database_lost("claiming", error)
            await self._check_pool()
            return []
        except Exception as error:
            # E.g. a claimed row this code cannot read; the claim's leases expire and the
            # queue's attempts bound how often that row comes back.
            log.error("claiming failed (%s: %s)", type(error).__name__, error, exc_info=error)
            return []
        self._database_back()
        self.stats.claim_rounds += 1
        self.stats.claimed += len(jobs)
        return jobs

    async def _finished(self) -> bool:
        if self.burst:
            return True
        if self.until is None:
            return False
        try:
            return await self.until()
        except DatabaseUnavailable as error:
            self._database_lost("checking progress", error)
            return False

    # -- one job --------------------------------------------------------------------------

    def _start(self, job: Job) -> None:
        log.info(
            "job %s: %s %s of portal %s, attempt %d/%d",
            job.id,
            job.kind,
            job.content_type,
            job.portal_id,
            job.attempts,
            job.max_attempts,
        )
        task = asyncio.create_task(self._work(job), name=f"smuves-job-{job.id}")
        self._active[job.id] = task

        def finished(_: asyncio.Task[None]) -> None:
            self._active.pop(job.id, None)
            self._handler_tasks.pop(job.id, None)
            self._wake.set()

        task.add_done_callback(finished)

    async def _work(self, job: Job) -> None:
        handler = self.handlers[job.kind]
        ctx = JobContext(job, self.db, self.settings, self.limits, self.worker_id)
        handling = asyncio.create_task(contained(handler(ctx)), name=f"smuves-handler-{job.id}")
        self._handler_tasks[job.id] = handling
        lost = asyncio.Event()
        beating = asyncio.create_task(self._heartbeat(job, handling, lost))
        try:
            await handling
        except asyncio.CancelledError:
            if lost.is_set():
                self._lease_lost(job)
            elif self._releasing:
                await self._release(job)
            else:
                raise
        except LeaseLost:
            self._lease_lost(job)
        except Exception as error:
            await self._record_failure(job, error)
        else:
            self.stats.completed += 1
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating

    async def _heartbeat(self, job: Job, handling: asyncio.Task[None], lost: asyncio.Event) -> None:
        every = self.queue.lease(job.kind).total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            try:
                await self.queue.heartbeat(job)
            except LeaseLost:
                lost.set()
                handling.cancel()
                return
            except DatabaseError as error:
                # Keep trying: if the database is back before the lease ends, nothing is lost.
                log.warning("job %s: heartbeat failed (%s)", job.id, error)

    def _lease_lost(self, job: Job) -> None:
        self.stats.lost += 1
        log.warning("job %s: lease lost to another worker; stopped working on it", job.id)

    async def _record_failure(self, job: Job, error: Exception) -> None:
        outcome = outcome_for(job, error)
        try:
            if isinstance(outcome, Park):
                await self._persist(lambda: self.queue.park(job, outcome.until, outcome.reason))
                self.stats.parked += 1
                self._log_park(job, outcome, error)
                return
            if isinstance(outcome, FailRun):
                changed = await self._persist(
                    lambda: self.queue.fail_run_token_refused(job, outcome.message, outcome.public)
                )
            else:
                changed = await self._persist(
                    lambda: self.queue.fail(
                        job, outcome.message, retryable=outcome.retryable, public=outcome.public
                    )
                )
        except LeaseLost:
            self._lease_lost(job)
            return
        except DatabaseError as db_error:
            log.error(
                "job %s failed (%s) and the failure could not be recorded (%s); its lease "
                "will expire and it will be tried again",
                job.id,
                outcome.reason if isinstance(outcome, Park) else outcome.message,
                db_error,
            )
            return
        self.stats.failed += 1
        self.stats.errors.append(outcome.message)
        retry = (
            f"retry after {changed.run_after:%H:%M:%S}"
            if changed.status is JobStatus.PENDING
            else "failed for good"
        )
        log.warning("job %s: %s (%s)", job.id, outcome.message, retry)

    def _log_park(self, job: Job, park: Park, error: Exception) -> None:
        # A missing key parks the portal's jobs again and again: one warning tells it.
        told = isinstance(error, TokenKeyMissing) and job.portal_id in self._key_missing_told
        if isinstance(error, TokenKeyMissing):
            self._key_missing_told.add(job.portal_id)
        log.log(logging.DEBUG if told else logging.WARNING, "job %s: %s", job.id, park.reason)

    async def _release(self, job: Job) -> None:
        try:
            await self._persist(lambda: self.queue.release(job))
        except LeaseLost:
            return
        except DatabaseError as error:
            log.error("job %s could not be handed back (%s); its lease will expire", job.id, error)
            return
        self.stats.released += 1
        log.info("job %s handed back for another worker", job.id)

    async def _persist(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run a queue write, retrying a few times through a database restart."""
        delay = _DB_RETRY_FIRST
        for _ in range(_PERSIST_TRIES - 1):
            try:
                return await write()
            except DatabaseUnavailable as error:
                log.warning("database unavailable (%s); retrying in %.1fs", error, delay)
                await self._check_pool()
                await asyncio.sleep(delay)
                delay = min(delay * 2, _DB_RETRY_MAX)
        return await write()

    async def _check_pool(self) -> None:
        """Drop the pool's dead connections (after a restart every idle one is dead)."""
        try:
            await self.db.check()
        except DatabaseError as error:
            log.debug("pool check failed: %s", error)

    async def _drain(self) -> None:
        if not self._active:
            return
        grace = self.settings.shutdown_grace_seconds
        if grace > 0 and not self._at_once.is_set():
            log.info("waiting up to %.0fs for %d running job(s)", grace, len(self._active))
            # Whichever is first: every job done, the grace over, or a stop asked at once.
            done = asyncio.ensure_future(asyncio.wait(list(self._active.values())))
            asked = asyncio.ensure_future(self._at_once.wait())
            await asyncio.wait((done, asked), timeout=grace, return_when=asyncio.FIRST_COMPLETED)
            done.cancel()  # the jobs go on: cancelling a wait leaves what it waits for alone
            asked.cancel()
        if not self._active:
            return
        self._releasing = True
        for handling in list(self._handler_tasks.values()):
            handling.cancel()
        await asyncio.wait(list(self._active.values()), timeout=_RELEASE_TIMEOUT)
