"""Connection pools: an async psycopg pool per database role.

    async with open_pool(settings, role=DbRole.WORKER) as pool:
        db = Database(pool)

``role`` is the database role every new connection switches to (``SET ROLE``): ``WORKER`` for
queue workers, ``APP`` for the HTTP API, ``None`` for the login role (migrations, operator
commands). Connections are in autocommit mode: every statement is its own transaction unless
it runs inside ``conn.transaction()``. With ``settings.database_url`` unset, the embedded
PostgreSQL is started for as long as the pool is open.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum

from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from smuves_sync.db.embedded import embedded_server
from smuves_sync.db.queries import queries
from smuves_sync.settings import Settings

Pool = AsyncConnectionPool[AsyncConnection[TupleRow]]


class DbRole(StrEnum):
    """Database roles a pool can act as (created by the migrations)."""

    APP = "smuves_app"
    WORKER = "smuves_worker"


@asynccontextmanager
async def database_url(settings: Settings) -> AsyncIterator[str]:
    """Yield the configured database URL, or the embedded server's while it runs."""
    if settings.database_url:
        yield settings.database_url
        return
    async with embedded_server(settings.data_dir) as url:
        yield url


@asynccontextmanager
async def pool_for(
    conninfo: str,
    *,
    role: DbRole | None = None,
    min_size: int = 1,
    max_size: int = 10,
    name: str | None = None,
    check_idle_after: float | None = 2.0,
) -> AsyncIterator[Pool]:
    """An open pool on `conninfo` whose connections act as `role`; closed on exit.

    A connection that sat idle in the pool for more than `check_idle_after` seconds is
    tested (one round trip) before it is handed out, so that a pool outlives a database
    restart without handing out dead connections; one in steady use is not re-tested on
    every checkout, which would double the round trips of a busy worker. None: never test.
    """
    returned_at: weakref.WeakKeyDictionary[AsyncConnection[TupleRow], float] = (
        weakref.WeakKeyDictionary()
    )

    async def configure(conn: AsyncConnection[TupleRow]) -> None:
        if role is not None:
            await conn.execute(queries()["session_set_role"], {"role": role.value})

    async def note_return(conn: AsyncConnection[TupleRow]) -> None:
        returned_at[conn] = time.monotonic()

    async def check_if_idle(conn: AsyncConnection[TupleRow]) -> None:
        assert check_idle_after is not None
        idle_since = returned_at.get(conn)
        if idle_since is None or time.monotonic() - idle_since > check_idle_after:
            await AsyncConnectionPool.check_connection(conn)

    pool: Pool = AsyncConnectionPool(
        conninfo,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True},
        configure=configure,
        reset=note_return,
        check=check_if_idle if check_idle_after is not None else None,
        name=name or (role.value if role else "smuves_login"),
        open=False,
    )
    await pool.open(wait=True)
    try:
        yield pool
    finally:
        await pool.close()


@asynccontextmanager
async def open_pool(
    settings: Settings,
    *,
    role: DbRole | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
) -> AsyncIterator[Pool]:
    """A pool configured from `settings` (embedded server when no URL is set)."""
    async with (
        database_url(settings) as url,
        pool_for(
            url,
            role=role,
            min_size=min_size or settings.pool_min_size,
            max_size=max_size or settings.pool_max_size,
        ) as pool,
    ):
        yield pool
