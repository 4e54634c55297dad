"""Connection pools: an async psycopg pool per database role.

    async with open_pool(settings, role=DbRole.WORKER) as pool:     # the workers' own login
        db = Database(pool)
    async with open_pool(settings) as pool: ...                      # the operator's login

The API and the workers log in as their own roles (migrations/0001_roles.sql): ``smuves_api_login``
(a member of smuves_app) at ``SMUVES_API_DATABASE_URL``, ``smuves_worker_login`` (a member of
smuves_worker) at ``SMUVES_WORKER_DATABASE_URL``; with ``SMUVES_ROLE_PREFIX=acme``,
``acme_api_login`` and ``acme_worker_login`` (`DbRole.login_in`). Neither can become anything
with more rights, so a ``RESET ROLE`` on one of their connections gains nothing; a runtime pool
refuses to open on a login (of any name) that is a superuser, bypasses row-level security or
may act as the owner.
With the embedded server (``SMUVES_DATABASE_URL`` unset) both logins are on its socket, which
trusts them. Only ``SMUVES_SHARED_DATABASE_LOGIN=1`` makes the runtime pools log in with
``SMUVES_DATABASE_URL`` and ``SET ROLE`` (one login for everything: escalation is one
``RESET ROLE`` away).

``pool_for(conninfo, role=…)`` is the low-level form: ``role`` is the database role every new
connection switches to (``SET ROLE``), ``None`` for none. Connections are in autocommit mode:
every statement is its own transaction unless it runs inside ``conn.transaction()``. With
``settings.database_url`` unset, the embedded PostgreSQL is started for as long as the pool is
open.

A pool that cannot open (the database down, the login refused) raises `DatabaseUnavailable`,
never the driver's error; the statements on a pool go through `Database`, which translates too.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum

from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import TupleRow, dict_row
from psycopg_pool import AsyncConnectionPool

from smuves_sync.db.driver_errors import translated
from smuves_sync.db.embedded import embedded_server
from smuves_sync.db.queries import queries
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings

Pool = AsyncConnectionPool[AsyncConnection[TupleRow]]


class DbRole(StrEnum):
    """Database roles a pool can act as (created by the migrations)."""

    APP = "smuves_app"
    WORKER = "smuves_worker"

    @property
    def login(self) -> str:
        """The LOGIN role that connects with this role's rights (a member of it only), with
        the default (empty) role prefix."""
        return self.login_of("")

    def login_of(self, prefix: str) -> str:
        """This role's LOGIN role in the install of role prefix `prefix` (``SMUVES_ROLE_PREFIX``;
        empty: ``smuves``)."""
        return f"{prefix or 'smuves'}_{'api' if self is DbRole.APP else 'worker'}_login"

    def login_in(self, settings: Settings) -> str:
        """This role's LOGIN role in the install `settings` configure."""
        return self.login_of(settings.role_prefix)

    @property
    def url_variable(self) -> str:
        """The setting that holds the URL of this role's login."""
        return "SMUVES_API_DATABASE_URL" if self is DbRole.APP else "SMUVES_WORKER_DATABASE_URL"

    def configured_url(self, settings: Settings) -> str | None:
        """The URL of this role's login in `settings`, if one is set."""
        return settings.api_database_url if self is DbRole.APP else settings.worker_database_url


def login_url(url: str, role: DbRole, prefix: str = "") -> str:
    """`url` with `role`'s runtime login (of role prefix `prefix`) as its user and no password
    (a server that trusts its local connections, as the embedded one does)."""
    params = conninfo_to_dict(url)
    params.pop("password", None)
    params["user"] = role.login_of(prefix)
    return make_conninfo("", **params)


def with_login_urls(settings: Settings, url: str) -> Settings:
    """`settings` for a server that is running at `url`: with no ``database_url`` configured
    (the embedded server) it becomes `url`, and the runtime logins' URLs not configured are
    the same server as their own roles. A configured database changes nothing."""
    if settings.database_url is not None:
        return settings
    return settings.model_copy(
        update={
            "database_url": url,
            "api_database_url": settings.api_database_url
            or login_url(url, DbRole.APP, settings.role_prefix),
            "worker_database_url": settings.worker_database_url
            or login_url(url, DbRole.WORKER, settings.role_prefix),
        }
    )


def runtime_conninfo(settings: Settings, role: DbRole) -> tuple[str, DbRole | None]:
    """Where `role`'s pool logs in, and the role it must SET after logging in (None: its
    login has the role's rights already). `ConfigurationError` when nothing says where."""
    own = role.configured_url(settings)
    if own:
        return own, None
    if settings.shared_database_login and settings.database_url:
        return settings.database_url, role
    raise ConfigurationError(
        f"{role.url_variable} is not set: the {_WHO[role]} log(s) in as "
        f"{role.login_in(settings)} "
        f"(created by `smuves db migrate`), never as the login of SMUVES_DATABASE_URL; set "
        f"it, or SMUVES_SHARED_DATABASE_LOGIN=1 to use one login for everything on purpose"
    )


_WHO = {DbRole.APP: "HTTP API", DbRole.WORKER: "workers"}


async def check_runtime_login(pool: Pool, role: DbRole, login: str) -> None:
    """`ConfigurationError` unless the pool's login has `role`'s rights and nothing more; its
    name is not checked (`login`, the expected one, is named in the error), so a login of any
    role prefix passes."""
    with translated():
        async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(queries()["session_login"], {"role": role.value})
            found = await cur.fetchone()
    assert found is not None  # the session's own login is always in pg_roles
    wrong = [
        what
        for what, bad in (
            ("is a superuser", found["superuser"]),
            ("bypasses row-level security", found["bypassrls"]),
            ("may act as smuves_owner", found["owner"]),
            (f"is not a member of {role.value}", not found["member"]),
        )
        if bad
    ]
    if wrong:
        raise ConfigurationError(
            f"{role.url_variable} logs in as {found['login']}, which {' and '.join(wrong)}: "
            f"the {_WHO[role]} must log in as {login}"
        )


@asynccontextmanager
async def database_url(settings: Settings) -> AsyncIterator[str]:
    """Yield the configured database URL (the operator's login), or the embedded server's
    while it runs. With a runtime login's URL configured the database is not the embedded
    one, so a missing SMUVES_DATABASE_URL is a `ConfigurationError`, not an embedded server
    started in its place."""
    if settings.database_url:
        yield settings.database_url
        return
    configured = [role.url_variable for role in DbRole if role.configured_url(settings)]
    if configured:
        verb = "names" if len(configured) == 1 else "name"
        raise ConfigurationError(
            f"SMUVES_DATABASE_URL is not set: this command runs as the operator's login, and "
            f"{' and '.join(configured)} {verb} a database that is not the embedded one"
        )
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
    with translated():
        await pool.open(wait=True)
    try:
        yield pool
    finally:
        await pool.close()


@asynccontextmanager
async def runtime_pool(
    settings: Settings, role: DbRole, *, min_size: int, max_size: int
) -> AsyncIterator[tuple[Pool, str]]:
    """A pool logged in as `role`'s runtime login (see the module docstring), and the URL it
    connects to. `settings` name a running server (`with_login_urls` for the embedded one)."""
    conninfo, set_role = runtime_conninfo(settings, role)
    name = role.value if set_role else role.login_in(settings)
    async with pool_for(
        conninfo, role=set_role, min_size=min_size, max_size=max_size, name=name
    ) as pool:
        if set_role is None:
            await check_runtime_login(pool, role, role.login_in(settings))
        yield pool, conninfo


@asynccontextmanager
async def open_pool(
    settings: Settings,
    *,
    role: DbRole | None = None,
    min_size: int | None = None,
    max_size: int | None = None,
) -> AsyncIterator[Pool]:
    """A pool configured from `settings` (embedded server when no URL is set): the runtime
    login of `role`, or the operator's login with `role` None."""
    least = min_size or settings.pool_min_size
    most = max_size or settings.pool_max_size
    if role is not None and role.configured_url(settings):
        # A host of the API or the workers needs its own login's URL only: no operator's URL,
        # and no embedded server in its place.
        async with runtime_pool(settings, role, min_size=least, max_size=most) as (pool, _):
            yield pool
        return
    async with database_url(settings) as url:
        if role is None:
            async with pool_for(url, min_size=least, max_size=most) as pool:
                yield pool
            return
        ready = with_login_urls(settings, url)
        async with runtime_pool(ready, role, min_size=least, max_size=most) as (pool, _):
            yield pool
