"""`Database`: noun-verb async methods over the named queries; plain values in, models out.

    db = Database(pool)                        # any pool of smuves_sync.db.pool
    job = await db.job_get(42)                 # -> Job | None (None: absent or not visible)

    async with db.as_user(user_id) as scoped:  # smuves_app: one transaction, app.user_id set
        run = await scoped.run_get(7)
    async with db.for_portal(portal_id) as scoped:  # smuves_worker: app.portal_id set
        ...
    async with db.transaction() as scoped:     # one transaction, no tenant setting
        ...

A scoped `Database` runs every method on its one connection inside its transaction; an
unscoped one takes a pooled connection per call (autocommit: each call is its own
transaction). Row-level security decides what each role sees; see migrations/0003.

Queue methods (each wraps one SQL function of migrations/0004_queue.sql or 0005_queue_runs.sql;
`now` is injected time for tests, None means the database's clock):

    job_claim(worker, kinds, *, limit=1, fetch_lease, export_lease, now=None) -> list[Job]
    job_claim_next(worker, kinds, *, fetch_lease, export_lease, now=None)    -> Job | None
    job_heartbeat(job_id, lease_token, *, now=None)                           -> Job | None
    job_checkpoint(job_id, lease_token, cursor, processed, *, total=None, now=None)
    job_complete(job_id, lease_token, *, processed=None, now=None)            -> Job | None
    job_complete_many(leases, *, now=None)                          -> list[int] (job ids)
    job_complete_and_claim(leases, worker, kinds, *, limit, fetch_lease, export_lease, now=None)
                                                          -> (list[int] completed, list[Job])
    job_fail(job_id, lease_token, error, *, retryable, backoff_base, backoff_max,
             jitter_ratio, now=None)                                          -> Job | None
    job_park(job_id, lease_token, until, reason, *, now=None)                 -> Job | None
    job_release(job_id, lease_token, *, now=None)                             -> Job | None
    run_reconcile(*, now=None)                                                -> list[Run]
    portal_token(job_id, lease_token)              -> (portal_id, token or None) | None

A fenced method returns None (or leaves a job out of a list) when the job no longer runs
under that lease token; `smuves_sync.queue` turns that into `LeaseLost`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow, dict_row

from smuves_sync.db.pool import Pool
from smuves_sync.db.queries import queries
from smuves_sync.db.rows import job_from_row, job_from_values, run_from_row
from smuves_sync.models import ContentType, Job, JobKind, Run

Params = Mapping[str, Any]


class Database:
    """The one gateway to SQL for the rest of the package."""

    def __init__(self, pool: Pool, *, _conn: AsyncConnection[TupleRow] | None = None) -> None:
        self.pool = pool
        self._conn = _conn

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[TupleRow]]:
        if self._conn is not None:
            yield self._conn
        else:
            async with self.pool.connection() as conn:
                yield conn

    async def _tuples(self, name: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        async with self._connection() as conn, conn.cursor() as cur:
            await cur.execute(queries()[name], params)
            return await cur.fetchall()

    async def _all(self, name: str, params: Params | None = None) -> list[dict[str, Any]]:
        async with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(queries()[name], params)
            return await cur.fetchall()

    async def _one(self, name: str, params: Params | None = None) -> dict[str, Any] | None:
        rows = await self._all(name, params)
        return rows[0] if rows else None

    async def _execute(self, name: str, params: Params | None = None) -> int:
        async with self._connection() as conn, conn.cursor() as cur:
            await cur.execute(queries()[name], params)
            return cur.rowcount

    # -- scopes ---------------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """A `Database` bound to one connection inside one transaction."""
        if self._conn is not None:
            async with self._conn.transaction():
                yield self
            return
        async with self.pool.connection() as conn, conn.transaction():
            yield Database(self.pool, _conn=conn)

    @asynccontextmanager
    async def as_user(self, user_id: uuid.UUID) -> AsyncIterator[Database]:
        """A transaction in which the app role sees what `user_id` may see."""
        async with self.transaction() as scoped:
            await scoped._execute("session_set_user", {"user_id": user_id})
            yield scoped

    @asynccontextmanager
    async def for_portal(self, portal_id: int) -> AsyncIterator[Database]:
        """A transaction in which the worker role sees the rows of `portal_id`."""
        async with self.transaction() as scoped:
            await scoped._execute("session_set_portal", {"portal_id": portal_id})
            yield scoped

    # -- reads ----------------------------------------------------------------------------

    async def job_get(self, job_id: int) -> Job | None:
        """The job `job_id`, or None when it does not exist or is not visible."""
        row = await self._one("job_get", {"job_id": job_id})
        return job_from_row(row) if row else None

    async def run_get(self, run_id: int) -> Run | None:
        """The run `run_id`, or None when it does not exist or is not visible."""
        row = await self._one("run_get", {"run_id": run_id})
        return run_from_row(row) if row else None

    async def job_list_in_flight(self, portal_id: int, kind: JobKind) -> list[Job]:
        """The pending and running jobs of `kind` for `portal_id`."""
        rows = await self._all("job_list_in_flight", {"portal_id": portal_id, "kind": str(kind)})
        return [job_from_row(r) for r in rows]

    # -- creation -------------------------------------------------------------------------

    async def run_create(
        self,
        portal_id: int,
        kind: JobKind,
        content_types: Sequence[ContentType],
        *,
        owner_id: uuid.UUID | None = None,
    ) -> Run:
        """A new pending run."""
        row = await self._one(
            "run_create",
            {
                "portal_id": portal_id,
                "owner_id": owner_id,
                "kind": str(kind),
                "content_types": [str(t) for t in content_types],
            },
        )
        assert row is not None  # INSERT … RETURNING always returns the row
        return run_from_row(row)

    async def job_enqueue(
        self,
        run_id: int,
        content_type: ContentType,
        *,
        max_attempts: int = 3,
        run_after: datetime | None = None,
        total: int | None = None,
        idempotency_key: str | None = None,
    ) -> Job | None:
        """A new pending job of run `run_id` (its portal and kind), or None when an equal job is
        already in flight or `idempotency_key` was used before. Wakes listening workers."""
        row = await self._one(
            "job_enqueue",
            {
                "run_id": run_id,
                "content_type": str(content_type),
                "max_attempts": max_attempts,
                "run_after": run_after,
                "total": total,
                "idempotency_key": idempotency_key,
            },
        )
        return job_from_row(row) if row else None

    # -- the queue ------------------------------------------------------------------------

    async def _jobs(self, name: str, params: Params) -> list[Job]:
        return [job_from_row(r) for r in await self._all(name, params)]

    async def _job(self, name: str, params: Params) -> Job | None:
        jobs = await self._jobs(name, params)
        return jobs[0] if jobs else None

    async def job_claim(
        self,
        worker: str,
        kinds: Sequence[JobKind] | None,
        *,
        limit: int = 1,
        fetch_lease: timedelta,
        export_lease: timedelta,
        now: datetime | None = None,
    ) -> list[Job]:
        """Claim up to `limit` due or lease-expired jobs of `kinds` (None: all), oldest first."""
        params = _claim_params(worker, kinds, limit, fetch_lease, export_lease, now)
        # claim_jobs returns its rows in id order
        return [job_from_values(values) for values in await self._tuples("job_claim", params)]

    async def job_claim_next(
        self,
        worker: str,
        kinds: Sequence[JobKind] | None,
        *,
        fetch_lease: timedelta,
        export_lease: timedelta,
        now: datetime | None = None,
    ) -> Job | None:
        """Claim one job (`claim_next_job`), or None when nothing is due."""
        return await self._job(
            "job_claim_next",
            {
                "worker": worker,
                "kinds": None if kinds is None else [str(k) for k in kinds],
                "fetch_lease": fetch_lease,
                "export_lease": export_lease,
                "now": now,
            },
        )

    async def job_heartbeat(
        self, job_id: int, lease_token: uuid.UUID, *, now: datetime | None = None
    ) -> Job | None:
        """Extend the lease; None when the lease was lost."""
        return await self._job(
            "job_heartbeat", {"job_id": job_id, "lease_token": lease_token, "now": now}
        )

    async def job_checkpoint(
        self,
        job_id: int,
        lease_token: uuid.UUID,
        cursor: str | None,
        processed: int,
        *,
        total: int | None = None,
        now: datetime | None = None,
    ) -> Job | None:
        """Save the resume point and progress, extending the lease; None when it was lost."""
        return await self._job(
            "job_checkpoint",
            {
                "job_id": job_id,
                "lease_token": lease_token,
                "cursor": cursor,
                "processed": processed,
                "total": total,
                "now": now,
            },
        )

    async def job_complete(
        self,
        job_id: int,
        lease_token: uuid.UUID,
        *,
        processed: int | None = None,
        now: datetime | None = None,
    ) -> Job | None:
        """Mark the job completed (and settle its run if it was the last); None: lease lost."""
        return await self._job(
            "job_complete",
            {"job_id": job_id, "lease_token": lease_token, "processed": processed, "now": now},
        )

    async def job_complete_many(
        self, leases: Sequence[tuple[int, uuid.UUID]], *, now: datetime | None = None
    ) -> list[int]:
        """Complete many jobs in one statement; returns the ids completed (lost leases are
        left out)."""
        rows = await self._all(
            "job_complete_many",
            {
                "job_ids": [job_id for job_id, _ in leases],
                "lease_tokens": [token for _, token in leases],
                "now": now,
            },
        )
        return sorted(r["id"] for r in rows)

    async def job_complete_and_claim(
        self,
        leases: Sequence[tuple[int, uuid.UUID]],
        worker: str,
        kinds: Sequence[JobKind] | None,
        *,
        limit: int,
        fetch_lease: timedelta,
        export_lease: timedelta,
        now: datetime | None = None,
    ) -> tuple[list[int], list[Job]]:
        """Complete `leases` and claim up to `limit` more jobs in one round trip and one
        transaction; returns (ids completed, jobs claimed).

        Both statements go out in one pipeline: everything sent before the pipeline's sync
        point runs in one implicit transaction, so the completions and the claim commit
        together (one WAL flush instead of two) or not at all. A batch worker's loop is this
        call; nothing is held between calls.
        """
        q = queries()
        complete_params = {
            "job_ids": [job_id for job_id, _ in leases],
            "lease_tokens": [token for _, token in leases],
            "now": now,
        }
        claim_params = _claim_params(worker, kinds, limit, fetch_lease, export_lease, now)
        async with (
            self._connection() as conn,
            conn.cursor() as completing,
            conn.cursor() as claiming,
        ):
            async with conn.pipeline():
                if leases:
                    await completing.execute(q["job_complete_many"], complete_params)
                await claiming.execute(q["job_claim"], claim_params)
            completed = sorted(row[0] for row in await completing.fetchall()) if leases else []
            claimed = [job_from_values(values) for values in await claiming.fetchall()]
        return completed, claimed

    async def job_fail(
        self,
        job_id: int,
        lease_token: uuid.UUID,
        error: str,
        *,
        retryable: bool,
        backoff_base: timedelta,
        backoff_max: timedelta,
        jitter_ratio: float,
        now: datetime | None = None,
    ) -> Job | None:
        """Retry later with backoff (retryable, attempts left) or fail for good.

        None when the lease was lost.
        """
        return await self._job(
            "job_fail",
            {
                "job_id": job_id,
                "lease_token": lease_token,
                "error": error,
                "retryable": retryable,
                "backoff_base": backoff_base,
                "backoff_max": backoff_max,
                "jitter_ratio": jitter_ratio,
                "now": now,
            },
        )

    async def job_park(
        self,
        job_id: int,
        lease_token: uuid.UUID,
        until: datetime,
        reason: str,
        *,
        now: datetime | None = None,
    ) -> Job | None:
        """Back to pending until `until`, attempt not spent, cursor kept; None: lease lost."""
        return await self._job(
            "job_park",
            {
                "job_id": job_id,
                "lease_token": lease_token,
                "until": until,
                "reason": reason,
                "now": now,
            },
        )

    async def job_release(
        self, job_id: int, lease_token: uuid.UUID, *, now: datetime | None = None
    ) -> Job | None:
        """Back to pending now, attempt not spent, cursor kept; None: lease lost."""
        return await self._job(
            "job_release", {"job_id": job_id, "lease_token": lease_token, "now": now}
        )

    async def run_reconcile(self, *, now: datetime | None = None) -> list[Run]:
        """Settle runs whose jobs are all finished; returns the runs it changed."""
        return [run_from_row(r) for r in await self._all("run_reconcile", {"now": now})]

    async def portal_token(
        self, job_id: int, lease_token: uuid.UUID
    ) -> tuple[int, bytes | None] | None:
        """(portal id, encrypted token or None) for the holder of the job's live lease;
        None when the job does not run under `lease_token`."""
        row = await self._one(
            "portal_token_for_job", {"job_id": job_id, "lease_token": lease_token}
        )
        if row is None:
            return None
        token = row["token_encrypted"]
        return row["portal_id"], bytes(token) if token is not None else None


def _claim_params(
    worker: str,
    kinds: Sequence[JobKind] | None,
    limit: int,
    fetch_lease: timedelta,
    export_lease: timedelta,
    now: datetime | None,
) -> dict[str, Any]:
    return {
        "worker": worker,
        "kinds": None if kinds is None else [str(k) for k in kinds],
        "limit": limit,
        "fetch_lease": fetch_lease,
        "export_lease": export_lease,
        "now": now,
    }
