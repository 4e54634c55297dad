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
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow, dict_row

from smuves_sync.db.pool import Pool
from smuves_sync.db.queries import queries
from smuves_sync.db.rows import job_from_row, run_from_row
from smuves_sync.models import Job, Run

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
