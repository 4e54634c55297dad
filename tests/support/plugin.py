"""The suite's pytest plugin (loaded by tests/conftest.py): databases, pools, the row factory,
and the fake HubSpot with everything a sync test needs.

The server comes from, in order: ``SMUVES_TEST_DATABASE_URL`` (a superuser URL); a
testcontainers PostgreSQL when a Docker daemon answers; else the embedded pgserver in a
temporary directory. A template database is migrated once per session and cloned with
``CREATE DATABASE … TEMPLATE`` for every test that asks for a database; the clone is dropped
in the background once the test is over, so no test waits for a drop.

Fixtures:

    pg_server        superuser URL of the server (session)
    dropper          drops the tests' databases in the background (session)
    template_db      name of the database migrated once for the session
    db_url           this test's own clone of the template (login role)
    empty_db_url     a new, unmigrated database
    settings         Settings pointing at db_url and its runtime logins (tests/support/logins.py)
    admin_pool, worker_pool, app_pool    pools acting as the login role, smuves_worker, smuves_app
    worker_login_pool, api_login_pool    pools logged in as smuves_worker_login, smuves_api_login
    db, worker_db, app_db                a `Database` on each
    factory          the row factory (tests/support/factories.py), writing as the login role
    hubspot          `Served`: the fake HubSpot of the test's `hubspot` marker, in a thread
    sync             `SyncBed`: that fake and the databases, settings and factory of a sync test
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from smuves_sync.db import Database, DbRole, Pool, migrate, pool_for
from smuves_sync.db.embedded import embedded_server
from smuves_sync.db.migrations import set_login_passwords
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, serve_in_thread
from tests.support.factories import Factory
from tests.support.logins import runtime_url, runtime_urls
from tests.support.sql import query
from tests.support.sync import Served, Sync, SyncBed, hubspot_setup

# `smuves` commands read ./.env (the playground `make demo` leaves); the tests must not: every
# command they run, in this process or in a subprocess that inherits this, reads no env file.
os.environ["SMUVES_ENV_FILE"] = ""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "hubspot(*specs, config=None, **fields): the portals (PortalSpec) the `hubspot` and "
        "`sync` fixtures' fake serves, and its ServerConfig (with `fields` changed)",
    )


def _docker_answers() -> bool:
    """True when a Docker daemon responds within a second or two (never on most CI boxes)."""
    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return False
    try:
        import docker

        docker.from_env(timeout=2).ping()
    except Exception:  # any failure means: no usable daemon, fall through to pgserver
        return False
    return True


@contextlib.contextmanager
def _container() -> Iterator[str]:
    from testcontainers.postgres import PostgresContainer

    with PostgresContainer("postgres:16-alpine", driver=None) as pg:
        yield pg.get_connection_url()


@pytest.fixture(scope="session")
async def pg_server() -> AsyncIterator[str]:
    """Superuser URL of the PostgreSQL server the tests use."""
    url = os.environ.get("SMUVES_TEST_DATABASE_URL")
    if url:
        yield url
        return
    if _docker_answers():
        with _container() as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="smv") as tmp:
        async with embedded_server(Path(tmp) / "pg") as url:
            yield url


def url_for(pg_server: str, dbname: str) -> str:
    """`pg_server` pointed at database `dbname`."""
    return make_conninfo(pg_server, dbname=dbname)


class Dropper:
    """Drops databases in the background, a few at a time: a DROP DATABASE waits for a
    checkpoint, which the next test need not wait for (and concurrent drops share one)."""

    def __init__(self, pg_server: str, at_once: int = 4) -> None:
        self._server = pg_server
        self._slots = asyncio.Semaphore(at_once)
        self._pending: set[asyncio.Task[None]] = set()
        self._failures: list[BaseException] = []

    def drop(self, name: str) -> None:
        """Drop database `name` soon."""
        task = asyncio.create_task(self._drop(name))
        self._pending.add(task)
        task.add_done_callback(self._done)

    async def _drop(self, name: str) -> None:
        async with self._slots:
            await query(self._server, "database_drop", parts={"db": name})

    def _done(self, task: asyncio.Task[None]) -> None:
        self._pending.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            self._failures.append(error)  # raised by close()

    async def close(self) -> None:
        """Wait for the drops asked for; raise what failed."""
        while self._pending:
            await asyncio.wait(set(self._pending))
        if self._failures:
            raise BaseExceptionGroup("test databases not dropped", self._failures)


@pytest.fixture(scope="session")
async def dropper(pg_server: str) -> AsyncIterator[Dropper]:
    """The session's background `Dropper`."""
    dropper = Dropper(pg_server)
    yield dropper
    await dropper.close()


@pytest.fixture(scope="session")
async def template_db(pg_server: str) -> AsyncIterator[str]:
    """Name of a database migrated once for the whole session."""
    # Unique per session: several test sessions may share one server.
    name = f"smuves_tpl_{os.getpid()}_{secrets.token_hex(3)}"
    await query(pg_server, "database_create", parts={"db": name})
    try:
        url = url_for(pg_server, name)
        await migrate(url)
        await _give_logins_a_password(url)
        yield name
    finally:
        await query(pg_server, "database_drop", parts={"db": name})


async def _give_logins_a_password(url: str) -> None:
    """On a server that wants passwords, the runtime logins get the test server's own."""
    if not conninfo_to_dict(url).get("password"):
        return  # the server trusts local connections: the logins need none
    logins = Settings(database_url=url, **runtime_urls(url))
    for attempt in range(5):
        try:
            await set_login_passwords(url, logins)
            return
        except psycopg.errors.InternalError_:  # "tuple concurrently updated": another session
            if attempt == 4:
                raise


@pytest.fixture
async def empty_db_url(pg_server: str, dropper: Dropper) -> AsyncIterator[str]:
    """URL of a new, empty (unmigrated) database, dropped after the test."""
    name = f"smuves_empty_{secrets.token_hex(5)}"
    await query(pg_server, "database_create", parts={"db": name})
    yield url_for(pg_server, name)
    dropper.drop(name)


@pytest.fixture
async def db_url(pg_server: str, template_db: str, dropper: Dropper) -> AsyncIterator[str]:
    """URL (login role) of this test's own clone of the migrated template."""
    name = f"smuves_t_{secrets.token_hex(5)}"
    await query(pg_server, "harness_clone_database", parts={"db": name, "template": template_db})
    yield url_for(pg_server, name)
    dropper.drop(name)


@pytest.fixture
def settings(db_url: str) -> Settings:
    """Settings pointing at this test's database and its runtime logins."""
    return Settings(database_url=db_url, **runtime_urls(db_url))


@pytest.fixture
async def admin_pool(db_url: str) -> AsyncIterator[Pool]:
    """A pool acting as the login role (superuser: row-level security does not apply)."""
    async with pool_for(db_url, max_size=4) as pool:
        yield pool


@pytest.fixture
async def worker_pool(db_url: str) -> AsyncIterator[Pool]:
    """A pool acting as smuves_worker: the test's superuser login with SET ROLE, so it may
    pass the queue functions a time (`p_now`) as tests do; `worker_login_pool` is the
    product's own login."""
    async with pool_for(db_url, role=DbRole.WORKER, max_size=10) as pool:
        yield pool


@pytest.fixture
async def app_pool(db_url: str) -> AsyncIterator[Pool]:
    """A pool acting as smuves_app."""
    async with pool_for(db_url, role=DbRole.APP, max_size=4) as pool:
        yield pool


@pytest.fixture
async def worker_login_pool(db_url: str) -> AsyncIterator[Pool]:
    """A pool logged in as smuves_worker_login, as `smuves worker` is."""
    async with pool_for(runtime_url(db_url, DbRole.WORKER), max_size=4) as pool:
        yield pool


@pytest.fixture
async def api_login_pool(db_url: str) -> AsyncIterator[Pool]:
    """A pool logged in as smuves_api_login, as `smuves serve` is."""
    async with pool_for(runtime_url(db_url, DbRole.APP), max_size=4) as pool:
        yield pool


@pytest.fixture
def db(admin_pool: Pool) -> Database:
    """`Database` as the login role."""
    return Database(admin_pool)


@pytest.fixture
def worker_db(worker_pool: Pool) -> Database:
    """`Database` as smuves_worker."""
    return Database(worker_pool)


@pytest.fixture
def app_db(app_pool: Pool) -> Database:
    """`Database` as smuves_app."""
    return Database(app_pool)


@pytest.fixture
def factory(admin_pool: Pool) -> Factory:
    """The row factory, writing as the login role."""
    return Factory(admin_pool)


@pytest.fixture
def hubspot(request: pytest.FixtureRequest) -> Iterator[Served[FakeHubSpot]]:
    """The fake HubSpot of the test's `hubspot` marker, served from a thread of this process."""
    specs, config = hubspot_setup(request)
    fake = FakeHubSpot(specs, config)
    with serve_in_thread(fake) as base_url:
        yield Served(fake, base_url, specs)


@pytest.fixture
def sync(
    hubspot: Served[FakeHubSpot],
    db_url: str,
    db: Database,
    worker_db: Database,
    factory: Factory,
) -> Sync:
    """The fake HubSpot and this test's databases, settings and factory, in one."""
    return SyncBed(hubspot.fake, hubspot.base_url, hubspot.specs, db_url, db, worker_db, factory)
