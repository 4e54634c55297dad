"""The API and the workers log in as their own roles, which cannot become anything stronger.

A RESET ROLE, a SET ROLE to the owner or a SET SESSION AUTHORIZATION on a runtime connection
either fails or leaves the connection exactly as weak as it was: the API's connection still
sees only the signed-in user's rows and never a token. Runtime pools refuse a login with more
rights, and without their own URL only the operator's explicit word shares one login.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any, TypedDict

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from smuves_sync.db import DbRole, Pool, open_pool
from smuves_sync.db.migrations import set_login_passwords
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings
from tests.support import query
from tests.support.factories import Factory
from tests.support.logins import runtime_url, runtime_urls


async def _rows(conn: psycopg.AsyncConnection[Any], name: str, **params: Any) -> list[Any]:
    return await query(conn, name, **params)


async def _refused(conn: psycopg.AsyncConnection[Any], statement: str) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await conn.execute(statement.encode())  # bytes: a fixed statement, nothing formatted


@pytest.mark.parametrize("role", list(DbRole))
async def test_a_runtime_login_cannot_become_anything_stronger(db_url: str, role: DbRole) -> None:
    async with await psycopg.AsyncConnection.connect(
        runtime_url(db_url, role), autocommit=True
    ) as conn:
        [me] = await _rows(conn, "roles_me")
        assert (me["session_user"], me["current_user"]) == (role.login, role.login)
        assert not (me["superuser"] or me["bypassrls"] or me["createrole"] or me["createdb"])
        assert not me["may_act_as_owner"]
        # Every role it may SET ROLE to: its own group role, nothing else.
        assert [r["name"] for r in await _rows(conn, "roles_settable")] == [role.value]

        for stronger in ("smuves_owner", "postgres", *(r.value for r in DbRole if r != role)):
            await _refused(conn, f"SET ROLE {stronger}")
        await _refused(conn, "SET SESSION AUTHORIZATION postgres")
        await _refused(conn, "SELECT pg_catalog.set_config('role', 'smuves_owner', false)")
        await conn.execute(b"RESET ROLE")
        await conn.execute(b"SET ROLE NONE")
        [me] = await _rows(conn, "roles_me")
        assert me["current_user"] == role.login and not me["may_act_as_owner"]


async def test_after_reset_role_the_api_sees_only_its_users_rows(
    db_url: str, factory: Factory
) -> None:
    alice, bob = await factory.user(), await factory.user()
    await factory.portal(alice, portal_id=501, token_encrypted=b"alice's secret")
    await factory.portal(bob, portal_id=502, token_encrypted=b"bob's secret")
    async with await psycopg.AsyncConnection.connect(runtime_url(db_url, DbRole.APP)) as conn:
        await conn.execute(b"RESET ROLE")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await conn.execute(b"SET ROLE smuves_owner")
        await conn.rollback()
        await conn.execute(b"RESET ROLE")
        await _rows(conn, "roles_set_user", user_id=alice)
        assert await _rows(conn, "roles_portals") == [{"id": 501}]
        assert await _rows(conn, "roles_portal_members") == [{"portal_id": 501}]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await _rows(conn, "roles_portal_tokens")
        await conn.rollback()
        # No user named: nothing at all.
        assert await _rows(conn, "roles_portals") == []


async def test_the_runtime_pools_log_in_as_their_own_roles(settings: Settings) -> None:
    for role in DbRole:
        async with open_pool(settings, role=role, max_size=1) as pool:
            assert await _whoami(pool) == (role.login, role.login)


async def test_a_runtime_url_with_more_rights_is_refused(db_url: str) -> None:
    # The operator's superuser login given as the API's: the pool refuses to open.
    settings = Settings(database_url=db_url, api_database_url=db_url)
    with pytest.raises(ConfigurationError, match="is a superuser") as refused:
        async with open_pool(settings, role=DbRole.APP, max_size=1):
            pass
    assert "smuves_api_login" in str(refused.value)
    # The worker's login given as the API's: not a member of smuves_app.
    settings = Settings(database_url=db_url, api_database_url=runtime_url(db_url, DbRole.WORKER))
    with pytest.raises(ConfigurationError, match="not a member of smuves_app"):
        async with open_pool(settings, role=DbRole.APP, max_size=1):
            pass


async def test_one_login_for_everything_only_when_the_operator_says_so(db_url: str) -> None:
    for role in DbRole:
        with pytest.raises(ConfigurationError, match=role.url_variable):
            async with open_pool(Settings(database_url=db_url), role=role, max_size=1):
                pass
        shared = Settings(database_url=db_url, shared_database_login=True)
        async with open_pool(shared, role=role, max_size=1) as pool:
            login, acting = await _whoami(pool)
        assert login != role.login and acting == role.value


async def test_db_migrate_gives_the_logins_the_passwords_of_their_urls(db_url: str) -> None:
    password = f"pw-{uuid.uuid4().hex}"
    urls = runtime_urls(db_url)
    with_password = Settings(
        database_url=db_url,
        api_database_url=make_conninfo(urls["api_database_url"], password=password),
        worker_database_url=make_conninfo(urls["worker_database_url"], password=password),
    )
    try:
        changed = await set_login_passwords(db_url, with_password)
        async with await psycopg.AsyncConnection.connect(db_url) as conn:
            stored = await _rows(conn, "roles_login_passwords")
    finally:
        await _restore_login_passwords(db_url)
    assert changed == [r.login for r in DbRole]
    assert {r["name"] for r in stored} == {r.login for r in DbRole}
    for row in stored:
        assert row["verifier"].startswith("SCRAM-SHA-256$") and password not in row["verifier"]
    # A URL naming another user sets nothing.
    other = make_conninfo(db_url, user="someone", password="x")
    assert (
        await set_login_passwords(db_url, Settings(database_url=db_url, api_database_url=other))
        == []
    )


async def _whoami(pool: Pool) -> tuple[str, str]:
    async with pool.connection() as conn:
        [me] = await _rows(conn, "roles_me")
    return me["session_user"], me["current_user"]


async def _restore_login_passwords(db_url: str) -> None:
    """The logins' passwords as the harness left them (the roles are the whole server's)."""
    if conninfo_to_dict(db_url).get("password"):
        await set_login_passwords(db_url, Settings(database_url=db_url, **runtime_urls(db_url)))
        return
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        for role in DbRole:
            await query(conn, "roles_clear_login_password", parts={"login": role.login})


async def test_a_runtime_host_needs_only_its_own_url(db_url: str, factory: Factory) -> None:
    # No SMUVES_DATABASE_URL on the host: the pool uses its login's URL, no embedded server.
    for role in DbRole:
        # _env_file: a pydantic-settings init argument its typed signature leaves out.
        own = Settings(_env_file=None, **_own_url(role, runtime_url(db_url, role)))  # type: ignore[call-arg]
        assert own.database_url is None
        async with open_pool(own, role=role, max_size=1) as pool:
            assert await _whoami(pool) == (role.login, role.login)
    # `smuves worker` the same way: it fires a schedule of this test's database.
    portal = await factory.portal()
    schedule = await factory.schedule(portal)  # never fired: its first firing sets its time
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env["SMUVES_WORKER_DATABASE_URL"] = runtime_url(db_url, DbRole.WORKER)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "smuves_sync.cli", "worker", "--burst", "--kinds", "export",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, out.decode()
    assert "embedded" not in out.decode()
    async with await psycopg.AsyncConnection.connect(db_url) as conn:
        [row] = await _rows(conn, "roles_schedule_next", schedule_id=schedule)
    assert row["next_run_at"] is not None


class _OwnUrl(TypedDict, total=False):
    api_database_url: str
    worker_database_url: str


def _own_url(role: DbRole, url: str) -> _OwnUrl:
    """Settings with the URL of `role`'s login only."""
    return {"api_database_url": url} if role is DbRole.APP else {"worker_database_url": url}


async def test_an_operators_command_without_the_operators_url_is_refused(db_url: str) -> None:
    # A worker host's settings: no embedded server is started in the operator's place.
    # _env_file: a pydantic-settings init argument its typed signature leaves out.
    host = Settings(_env_file=None, worker_database_url=runtime_url(db_url, DbRole.WORKER))  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="SMUVES_DATABASE_URL is not set"):
        async with open_pool(host, max_size=1):
            pass
