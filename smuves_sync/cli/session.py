"""Settings and database sessions for the commands that work jobs or change portals.

    settings = load_settings()                      # the environment, then ./.env
    cipher = token_cipher(settings)                 # exits 2 unless SMUVES_SECRET_KEY is valid
    async with worker_database(settings, max_size=8) as (db, conninfo): ...   # smuves_worker_login
    async with login_database(settings) as db: ...                          # login role

With SMUVES_DATABASE_URL unset the embedded Postgres is started and brought up to date
(migrations applied), so `make sync` and the demo work on a machine without a database.
A configured database is migrated by its operator (`smuves db migrate`), never implicitly.

Commands read settings from the environment, then from the dotenv file ``SMUVES_ENV_FILE``
(default ``.env`` in the working directory; empty: none; see `envfile`). `make demo` leaves its
settings there, so commands work against its playground afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import ValidationError

from smuves_sync.cli.common import ExitCode, command_error
from smuves_sync.cli.envfile import env_file
from smuves_sync.db import (
    Database,
    DbRole,
    database_url,
    migrate,
    pool_for,
    runtime_pool,
    with_login_urls,
)
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment, the env file (and `overrides`); a bad value exits 2."""
    try:
        return Settings(_env_file=env_file(), **overrides)  # type: ignore[call-arg]
    except ValidationError as error:
        # One line naming each variable; the values stay out of it (some are secrets).
        problems = "; ".join(
            f"SMUVES_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in error.errors()
        )
        raise command_error(f"configuration error: {problems}", ExitCode.USAGE) from None


def token_cipher(settings: Settings) -> TokenCipher:
    """The cipher of ``SMUVES_SECRET_KEY``; a missing or invalid key exits 2 with one line."""
    try:
        return TokenCipher(settings.secret_key)
    except ConfigurationError as error:
        raise command_error(str(error), ExitCode.USAGE) from None


@asynccontextmanager
async def _url(settings: Settings) -> AsyncIterator[str]:
    async with database_url(settings) as url:
        if settings.database_url is None:
            await migrate(url, settings.migrations_dir, role_prefix=settings.role_prefix)
        yield url


@asynccontextmanager
async def _runtime_server(settings: Settings, role: DbRole) -> AsyncIterator[Settings]:
    """`settings` naming the server `role`'s login connects to: its own URL when configured
    (nothing else is needed, not even SMUVES_DATABASE_URL), else the login URL's server."""
    if role.configured_url(settings):
        yield settings
        return
    async with _url(settings) as url:
        yield with_login_urls(settings, url)


@asynccontextmanager
async def worker_database(
    settings: Settings, *, max_size: int = 10
) -> AsyncIterator[tuple[Database, str]]:
    """A pool logged in as the workers' own role (smuves_worker_login, or SET ROLE
    smuves_worker where SMUVES_SHARED_DATABASE_LOGIN says so), and the URL its wake-up
    listener connects to."""
    async with (
        _runtime_server(settings, DbRole.WORKER) as ready,
        runtime_pool(ready, DbRole.WORKER, min_size=1, max_size=max_size) as (pool, conninfo),
    ):
        yield Database(pool), conninfo


@asynccontextmanager
async def login_database(settings: Settings) -> AsyncIterator[Database]:
    """A small pool acting as the login role (operator commands)."""
    async with _url(settings) as url, pool_for(url, min_size=1, max_size=2) as pool:
        yield Database(pool)
