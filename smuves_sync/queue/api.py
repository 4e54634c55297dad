"""`Queue`: the worker's view of the job queue, over the queue's calls in `smuves_sync.db.jobs`.

    queue = Queue(Database(worker_pool), settings, worker_id="host:1234")
    for job in await queue.claim([JobKind.FETCH], limit=free_slots):   # or run_id=…: one run
        token = await queue.portal_token(job)         # encrypted; decrypt in the worker
        found = await queue.portal_credentials(job)   # .token_encrypted, .time_zone
        job = await queue.checkpoint(job, cursor, processed, total=total)  # per page
        ...
        await queue.complete(job, processed=n)
    # on error:  await queue.fail(job, exc)            # exc.retryable decides retry vs fail
    # rate limit: await queue.park(job, resets_at, "HubSpot daily limit")  # no attempt spent
    # token refused: await queue.fail_run_token_refused(job, message, public)  # the whole run
    # shutdown:  await queue.release(job)              # no attempt spent, cursor kept
    # a batch worker: done, jobs = await queue.complete_and_claim(jobs, kinds, limit=n)

Leases are the database's (`job_leases`: fetch 300 s, export 120 s; `queue.lease(kind)`);
attempts, backoff and the per-portal cap on running fetches come from `Settings` (3 attempts,
base 10 s, cap 600 s, jitter 10 %; 5 running fetches a portal). Every fenced call raises
`errors.LeaseLost` when another worker took the job over (the lease expired and it was
reclaimed): stop working on it and do not write anything more for it. Every call accepts
`now=` for tests.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from smuves_sync.db import jobs
from smuves_sync.db.database import Database
from smuves_sync.db.portals import portal_token_refused
from smuves_sync.db.runs import run_reconcile
from smuves_sync.errors import LeaseLost
from smuves_sync.models import Job, JobKind, Run
from smuves_sync.settings import Settings

# How often a claim reads the leases again (an operator may change them), and the leases
# before the first read (DESIGN §4).
_LEASES_REREAD_SECONDS = 300.0
_DEFAULT_LEASES = {
    JobKind.FETCH: timedelta(minutes=5),
    JobKind.EXPORT: timedelta(minutes=2),
    JobKind.PUSH: timedelta(minutes=2),
}


def default_worker_id(prefix: str | None = None) -> str:
    """``prefix:pid`` (the prefix by default the host name): names the worker in
    ``jobs.locked_by``."""
    return f"{prefix or socket.gethostname()}:{os.getpid()}"


def _token(job: Job) -> uuid.UUID:
    if job.lease_token is None:  # not a claimed job: nothing to fence with
        raise LeaseLost(job.id)
    return job.lease_token


def _fenced(job: Job, changed: Job | None) -> Job:
    if changed is None:
        raise LeaseLost(job.id)
    return changed


def error_text(error: BaseException | str) -> str:
    """What a failure records in ``jobs.last_error``: the error's class and message."""
    if isinstance(error, str):
        return error
    return f"{type(error).__name__}: {error}"


class Queue:
    """Claim, extend, checkpoint and finish jobs; every state change is fenced by the lease."""

    def __init__(self, db: Database, settings: Settings, *, worker_id: str | None = None) -> None:
        self.db = db
        self.settings = settings
        self.worker_id = worker_id or default_worker_id(settings.worker_id)
        self._leases: dict[JobKind, timedelta] = {}
        self._leases_read_at: float | None = None

    def lease(self, kind: JobKind) -> timedelta:
        """How long a claimed job of `kind` keeps its lease without a heartbeat: the
        database's `job_leases` as this queue's last claim read them (DESIGN's until then)."""
        return self._leases.get(kind, _DEFAULT_LEASES[kind])

    async def _read_leases(self) -> None:
        # Before claiming, so that a failure here cannot strand claimed jobs.
        now = asyncio.get_running_loop().time()
        if self._leases_read_at is None or now - self._leases_read_at > _LEASES_REREAD_SECONDS:
            self._leases = await jobs.job_leases(self.db)
            self._leases_read_at = now

    def _claim(self, kinds: Sequence[JobKind] | None, limit: int, run_id: int | None) -> jobs.Claim:
        return jobs.Claim(
            self.worker_id,
            kinds,
            limit=limit,
            run_id=run_id,
            portal_max_running=self.settings.portal_max_running,
        )

    async def claim(
        self,
        kinds: Sequence[JobKind] | None,
        *,
        limit: int = 1,
        run_id: int | None = None,
        now: datetime | None = None,
    ) -> list[Job]:
        """Up to `limit` jobs of `kinds` (None: any), now running under this worker's leases;
        with `run_id`, only that run's jobs (expired leases of other runs are left alone)."""
        await self._read_leases()
        return await jobs.job_claim(self.db, self._claim(kinds, limit, run_id), now=now)

    async def heartbeat(self, job: Job, *, now: datetime | None = None) -> Job:
        """Extend the job's lease."""
        return _fenced(job, await jobs.job_heartbeat(self.db, job.id, _token(job), now=now))

    async def checkpoint(
        self,
        job: Job,
        cursor: str | None,
        processed: int,
        *,
        total: int | None = None,
        now: datetime | None = None,
    ) -> Job:
        """Save where the job got to (resume point, progress); extends the lease. A total
        below `processed` (HubSpot's count moved while the job ran) is raised to it: progress
        never shows more than all."""
        known = job.total if total is None else total
        if known is not None and processed > known:
            total = processed
        changed = await jobs.job_checkpoint(
            self.db, job.id, _token(job), cursor, processed, total=total, now=now
        )
        return _fenced(job, changed)

    async def complete(
        self, job: Job, *, processed: int | None = None, now: datetime | None = None
    ) -> Job:
        """Finish the job; its run is settled when this was its last open job. The commit
        waits for the WAL flush only where a crash that lost it must not run the job again
        (a push, a last attempt: `jobs.completion_flushes`)."""
        changed = await jobs.job_complete(
            self.db,
            job.id,
            _token(job),
            processed=processed,
            flush=jobs.completion_flushes([job]),
            now=now,
        )
        return _fenced(job, changed)

    async def complete_many(self, done: Sequence[Job], *, now: datetime | None = None) -> list[int]:
        """Finish many jobs in one round trip; returns the ids completed (lost leases left out).
        Committed as `complete` commits each of them."""
        leases = [(j.id, _token(j)) for j in done]
        flush = jobs.completion_flushes(done)
        return await jobs.job_complete_many(self.db, leases, flush=flush, now=now)

    async def complete_and_claim(
        self,
        done: Sequence[Job],
        kinds: Sequence[JobKind] | None,
        *,
        limit: int,
        now: datetime | None = None,
    ) -> tuple[list[int], list[Job]]:
        """Finish `done` and claim up to `limit` more jobs in one round trip and one
        transaction (the loop of a batch worker); returns (ids completed, jobs claimed).

        Lost leases are left out of the ids, as with `complete_many`. If either step fails,
        neither happened: the finished jobs are still running under this worker's leases.
        Committed as `complete` commits each of them.
        """
        await self._read_leases()
        leases = [(j.id, _token(j)) for j in done]
        claim = self._claim(kinds, limit, None)
        return await jobs.job_complete_and_claim(
            self.db,
            leases,
            claim,
            run_ids=[j.run_id for j in done],
            flush=jobs.completion_flushes(done),
            now=now,
        )

    async def fail(
        self,
        job: Job,
        error: BaseException | str,
        *,
        retryable: bool | None = None,
        public: str | None = None,
        now: datetime | None = None,
    ) -> Job:
        """Record a failure: retried with backoff when retryable and attempts remain, else
        failed for good (owner notified). `retryable` defaults to the error's own flag.

        The error's text is kept for the operators; `public` is what the portal's users are
        told. Without it they are told a message given as text as it is (the caller wrote it
        for them), and of an exception only its kind: its text may name hosts or files."""
        if retryable is None:
            retryable = bool(getattr(error, "retryable", False))
        if public is None:
            public = error if isinstance(error, str) else f"{type(error).__name__}: failed"
        changed = await jobs.job_fail(
            self.db,
            job.id,
            _token(job),
            error_text(error),
            retryable=retryable,
            backoff_base=timedelta(seconds=self.settings.backoff_base_seconds),
            backoff_max=timedelta(seconds=self.settings.backoff_max_seconds),
            jitter_ratio=self.settings.backoff_jitter_ratio,
            now=now,
            error_public=public,
        )
        return _fenced(job, changed)

    async def park(
        self,
        job: Job,
        until: datetime | timedelta,
        reason: str,
        *,
        now: datetime | None = None,
    ) -> Job:
        """Wait until `until` (e.g. a daily rate limit), or for `until` from the database's
        now, without spending an attempt."""
        changed = await jobs.job_park(self.db, job.id, _token(job), until, reason, now=now)
        return _fenced(job, changed)

    async def fail_run_token_refused(
        self, job: Job, message: str, public: str, *, now: datetime | None = None
    ) -> Job:
        """HubSpot refused the portal's token: fail the job and every other open job of its
        run at once (nothing more is asked of HubSpot for it) and mark the portal, to be
        reconnected; the job as it is now."""
        failed = await portal_token_refused(self.db, job.id, _token(job), message, public, now=now)
        return _fenced(job, next((j for j in failed if j.id == job.id), None))

    async def release(self, job: Job, *, now: datetime | None = None) -> Job:
        """Hand the job back for another worker now (shutdown) without spending an attempt."""
        return _fenced(job, await jobs.job_release(self.db, job.id, _token(job), now=now))

    async def portal_token(self, job: Job) -> bytes | None:
        """The encrypted token of the job's portal (None: the portal has none stored)."""
        return (await self.portal_credentials(job)).token_encrypted

    async def portal_credentials(self, job: Job) -> jobs.PortalCredentials:
        """The job's portal's encrypted token and time zone, while this worker holds the
        job's lease (`LeaseLost` otherwise)."""
        found = await jobs.job_portal_token(self.db, job.id, _token(job))
        if found is None:
            raise LeaseLost(job.id)
        return found

    async def reconcile(self, *, now: datetime | None = None) -> list[Run]:
        """Settle runs whose jobs are all finished; returns the runs changed."""
        return await run_reconcile(self.db, now=now)
