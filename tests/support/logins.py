"""The runtime logins of a test database: where the API and the workers connect as their own
roles (smuves_api_login, smuves_worker_login; migrations/0001_roles.sql), never as the test's
superuser.

    url = runtime_url(db_url, DbRole.APP)            # this test's database, as smuves_api_login
    Settings(database_url=db_url, **runtime_urls(db_url))
    env = {**runtime_env(db_url), ...}               # for a `smuves` subprocess

The logins have no password on a server that trusts local connections (the shared test
server, the embedded one). On a server that asks for one (a testcontainers Postgres), the
harness gives both logins the password of the test server's own URL, and the URLs carry it.
"""

from __future__ import annotations

from typing import TypedDict

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from smuves_sync.db import DbRole


def runtime_url(db_url: str, role: DbRole) -> str:
    """`db_url` (a test database, superuser) logged in as `role`'s runtime login instead."""
    params = conninfo_to_dict(db_url)
    params["user"] = role.login
    return make_conninfo("", **params)


class RuntimeUrls(TypedDict):
    """The Settings fields of both runtime logins, typed so that `Settings(**urls)` checks."""

    api_database_url: str
    worker_database_url: str


def runtime_urls(db_url: str) -> RuntimeUrls:
    """Settings fields: both runtime logins of `db_url`."""
    return RuntimeUrls(
        api_database_url=runtime_url(db_url, DbRole.APP),
        worker_database_url=runtime_url(db_url, DbRole.WORKER),
    )


def runtime_env(db_url: str) -> dict[str, str]:
    """Environment variables: both runtime logins of `db_url`."""
    urls = runtime_urls(db_url)
    return {
        "SMUVES_API_DATABASE_URL": urls["api_database_url"],
        "SMUVES_WORKER_DATABASE_URL": urls["worker_database_url"],
    }
