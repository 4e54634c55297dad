"""`Database`: runs the named queries of ``db/queries/*.sql``; the noun modules are written on it.

    db = Database(pool)                                   # any pool of smuves_sync.db.pool
    job = await db.one("job_get", {"job_id": 42}, row=model_row(Job))     # Job | None
    run = await db.only("run_create", params, row=model_row(Run))         # Run, or an error
    jobs = await db.all("run_jobs", {"run_id": 7}, row=model_row(Job))    # list[Job]
    changed = await db.execute("schedule_disable", {"schedule_id": 3})    # rows affected

    async with db.as_user(user_id) as scoped:        # smuves_app: one transaction, app.user_id set
        ...
    async with db.for_portal(portal_id) as scoped:   # smuves_worker: app.portal_id set
        ...                                          # (reads: runs, jobs, schedules, ...)
    async with db.for_job(job) as scoped:            # smuves_worker: and the job's lease,
        ...                                          # which its writes and content reads need
                                                     # (async_commit=True: a fetched page)
        async for row in scoped.stream("content_export_rows", params, row=dict_row): ...
    async with db.transaction() as scoped:           # one transaction, no tenant setting
        ...
    async with db.custom_plans() as scoped:          # one transaction, each statement planned
        ...                                          # with its values (the operators' reads)
    async with db.dedicated() as own:                # one connection held, autocommit: a
        ...                                          # worker loop's calls skip the checkout

A query is named, never written inline; `row` is a psycopg row factory (`rows.model_row`,
``scalar_row``, ``dict_row``). A scoped `Database` runs everything on its one connection inside
its transaction; an unscoped one takes a pooled connection per call (autocommit: each call is
its own transaction). Row-level security decides what each role sees; see the policies in
migrations/functions/security.sql.

Every call raises the package's errors, never the driver's (`driver_errors.translated`): a
lost database is `DatabaseUnavailable`, a refused grant or policy `DatabaseRefused` (a viewer's
change in `as_user`: `NotPermitted`; a write without the lease in `for_job`: `LeaseLost`), and a
scope that raises rolls its transaction back.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from psycopg import AsyncConnection
from psycopg.rows import BaseRowFactory, TupleRow

from smuves_sync.db.driver_errors import refusal, translated
from smuves_sync.db.pool import Pool
from smuves_sync.db.queries import queries
from smuves_sync.errors import DatabaseRefused, LeaseLost, NotPermitted
from smuves_sync.models import Job

Params = Mapping[str, Any]
# One statement of `Database.pipeline`: a query name, its parameters, its row factory.
Statement = tuple[str, Params | None, BaseRowFactory[Any]]
R = TypeVar("R")
# What the policies that fence a worker's writes by its job's lease are named after
# (worker_holds_lease and the lease policies in migrations/functions/security.sql): a row one
# of them refuses was written without a live lease.
_LEASE_POLICY = "_worker_lease"
# What marks the refusals of a member who is not an owner or editor of the portal (a viewer):
# the policies' names hold it, the functions raise with it as their constraint.
_EDITOR_MARK = "app_editor"
_NOT_PERMITTED = (
    "only a portal's owners and editors may start its fetches and exports or stop its runs; "
    "a viewer may only read"
)


@dataclass(frozen=True)
class OnPool:
    """What an app builds once and hands its handlers, around one pool: `db` is a `Database`
    on that pool, and the role the pool logs in as decides what it sees."""

    pool: Pool

    @property
    def db(self) -> Database:
        """A `Database` on the pool."""
        return Database(self.pool)


class Database:
    """The one gateway to SQL for the rest of the package."""

    def __init__(self, pool: Pool, *, connect_timeout: timedelta | None = None) -> None:
        """`connect_timeout`: how long a call may wait for a pooled connection (None: the
        pool's own limit)."""
        self.pool = pool
        self.connect_timeout = connect_timeout
        self._conn: AsyncConnection[TupleRow] | None = None

    def _bound(self, conn: AsyncConnection[TupleRow]) -> Database:
        scoped = Database(self.pool, connect_timeout=self.connect_timeout)
        scoped._conn = conn
        return scoped

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[TupleRow]]:
        """The connection this Database's statements run on: its scope's (inside `transaction`,
        `as_user`, `for_portal`), else one of the pool's for the block. What the driver raises
        in the block (or in waiting for the connection) comes out translated."""
        if self._conn is not None:
            with translated():
                yield self._conn
            return
        timeout = self.connect_timeout.total_seconds() if self.connect_timeout else None
        with translated():
            async with self.pool.connection(timeout=timeout) as conn:
                yield conn

    async def check(self) -> None:
        """Test the pool's idle connections and drop the dead ones (after a database restart
        every idle one is dead)."""
        with translated():
            await self.pool.check()

    # -- statements -----------------------------------------------------------------------

    async def all(
        self, query: str, params: Params | None = None, *, row: BaseRowFactory[R]
    ) -> list[R]:
        """Every row of the named query, made by `row`."""
        async with self.connection() as conn, conn.cursor(row_factory=row) as cur:
            await cur.execute(queries()[query], params)
            return await cur.fetchall()

    async def one(
        self, query: str, params: Params | None = None, *, row: BaseRowFactory[R]
    ) -> R | None:
        """The first row of the named query, made by `row`; None when it returns none."""
        async with self.connection() as conn, conn.cursor(row_factory=row) as cur:
            await cur.execute(queries()[query], params)
            return await cur.fetchone()

    async def only(self, query: str, params: Params | None = None, *, row: BaseRowFactory[R]) -> R:
        """The row a statement always returns (INSERT … RETURNING, count(*), a function that
        answers with one row), made by `row`; an error if it returns none after all."""
        found = await self.one(query, params, row=row)
        if found is None:
            raise RuntimeError(f"{query} returned no row")
        return found

    async def execute(self, query: str, params: Params | None = None) -> int:
        """Run the named query; how many rows it changed (or returned)."""
        async with self.connection() as conn, conn.cursor() as cur:
            await cur.execute(queries()[query], params)
            return cur.rowcount

    async def pipeline(self, *statements: Statement) -> list[list[Any]]:
        """Send the statements in one round trip; the rows of each, in order.

        On an unscoped `Database` everything sent before the pipeline's sync point runs in
        one implicit transaction: the statements commit together (one WAL flush) or not at all.
        """
        q = queries()
        async with self.connection() as conn:
            cursors = [conn.cursor(row_factory=row) for _, _, row in statements]
            try:
                async with conn.pipeline():
                    for cur, (name, params, _) in zip(cursors, statements, strict=True):
                        await cur.execute(q[name], params)
                return [await cur.fetchall() for cur in cursors]
            finally:
                for cur in cursors:
                    await cur.close()

    async def stream(
        self,
        query: str,
        params: Params | None = None,
        *,
        row: BaseRowFactory[R],
        batch_size: int = 2000,
    ) -> AsyncIterator[R]:
        """The named query's rows through a server-side cursor, `batch_size` at a time, so a
        large result is never held in memory. Needs a transaction (`transaction`,
        `for_job`, `as_user`, ...): the cursor lives as long as it does."""
        if self._conn is None:
            raise RuntimeError(f"{query}: streaming needs a transaction, e.g. db.for_job(...)")
        with translated():
            async with self._conn.cursor(f"smuves_{query}", row_factory=row) as cur:
                cur.itersize = batch_size
                await cur.execute(queries()[query], params)
                async for found in cur:
                    yield found

    # -- scopes ---------------------------------------------------------------------------

    @asynccontextmanager
    async def dedicated(self) -> AsyncIterator[Database]:
        """A `Database` on one of the pool's connections, held for the block, each statement
        still its own transaction (autocommit): for a loop that makes one call at a time (a
        worker's claims and completions), which then pays no pool checkout per call (about a
        tenth of a millisecond of client CPU each). A scoped one is itself."""
        if self._conn is not None:
            yield self
            return
        async with self.connection() as conn:
            yield self._bound(conn)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        """A `Database` bound to one connection inside one transaction (a savepoint when
        this one is already in a transaction)."""
        if self._conn is not None:
            with translated():
                async with self._conn.transaction():
                    yield self
            return
        # The translation is outside the transaction: whatever the block raises rolls it back.
        async with self.connection() as conn, conn.transaction():
            yield self._bound(conn)

    @asynccontextmanager
    async def as_user(self, user_id: uuid.UUID) -> AsyncIterator[Database]:
        """A transaction in which the app role sees what `user_id` may see. A change the
        user's role in its portal does not allow (a viewer's) raises `NotPermitted`; any
        other refusal is a `DatabaseRefused`."""
        try:
            async with self.transaction() as scoped:
                await scoped.execute("session_set_user", {"user_id": user_id})
                yield scoped
        except DatabaseRefused as error:
            refused = refusal(error)
            if refused is None:
                raise
            if refused.diag.constraint_name == f"portal_{_EDITOR_MARK}":
                raise NotPermitted(refused.diag.message_primary or _NOT_PERMITTED) from refused
            if f"_{_EDITOR_MARK}_" in (refused.diag.message_primary or ""):
                raise NotPermitted(_NOT_PERMITTED) from refused
            raise

    @asynccontextmanager
    async def for_portal(self, portal_id: int) -> AsyncIterator[Database]:
        """A transaction in which the worker role sees the rows of `portal_id` that need no
        lease (runs, jobs, schedules, exports, ...); it writes nothing of the portal's there
        (the lease policies in migrations/functions/security.sql)."""
        async with self.transaction() as scoped:
            await scoped.execute("session_set_portal", {"portal_id": portal_id})
            yield scoped

    @asynccontextmanager
    async def for_job(self, job: Job, *, async_commit: bool = False) -> AsyncIterator[Database]:
        """A transaction in which the worker role sees the rows of `job`'s portal and, while
        it holds the job's live lease (`job.lease_token`), reads its content and writes it.

        A row refused for want of that lease (it expired, or another worker took the job
        over) raises `LeaseLost`; an update or delete without it changes no row. With
        `async_commit` its COMMIT does not wait for the WAL flush (a fetched page: a crash
        loses it whole, with its checkpoint, and the job reads it again)."""
        if job.lease_token is None:
            raise RuntimeError(f"job {job.id} was not claimed: it has no lease to write under")
        setting = "session_set_job_async_commit" if async_commit else "session_set_job"
        params = {"portal_id": job.portal_id, "job_id": job.id, "lease_token": job.lease_token}
        try:
            async with self.transaction() as scoped:
                await scoped.execute(setting, params)
                yield scoped
        except DatabaseRefused as error:
            # A row the lease policies refused: the lease expired or was taken over.
            refused = refusal(error)
            if refused is not None and _LEASE_POLICY in (refused.diag.message_primary or ""):
                raise LeaseLost(job.id) from refused
            raise

    @asynccontextmanager
    async def custom_plans(self) -> AsyncIterator[Database]:
        """A transaction in which every statement is planned with its parameters' values,
        never with a cached generic plan: a query's optional filters (`%(x)s IS NULL OR …`)
        then drop out and its partial indexes can be used. The dashboard's pages read in
        one, so that their figures are also of one moment."""
        async with self.transaction() as scoped:
            await scoped.execute("session_custom_plans")
            yield scoped
