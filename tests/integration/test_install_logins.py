"""Two installs on one server: each has its own runtime logins (``SMUVES_ROLE_PREFIX``), only
they may connect to its database, and migrating one leaves the other's logins alone.

Roles are the whole server's and other test sessions use the default logins at the same
time: these tests name their installs with a random prefix and drop the roles they made.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from pydantic import ValidationError

from smuves_sync.db import DbRole, migrate, open_pool, with_login_urls
from smuves_sync.db.migrations import set_login_passwords
from smuves_sync.errors import MigrationError
from smuves_sync.settings import Settings
from tests.support import query


@dataclass(frozen=True)
class Install:
    prefix: str
    url: str  # the operator's (the test server's superuser)

    def login_url(self, role: DbRole, *, of: Install | None = None, password: str = "") -> str:
        """This install's database, as `role`'s login of install `of` (default: its own)."""
        login = role.login_of((of or self).prefix)
        extra = {"password": password} if password else {}
        return make_conninfo(self.url, user=login, **extra)

    def settings(self, password: str = "") -> Settings:
        """The operator's settings of this install, its runtime URLs carrying `password`."""
        return Settings(
            database_url=self.url,
            role_prefix=self.prefix,
            api_database_url=self.login_url(DbRole.APP, password=password),
            worker_database_url=self.login_url(DbRole.WORKER, password=password),
        )

    @property
    def logins(self) -> list[str]:
        """Its runtime logins."""
        return [role.login_of(self.prefix) for role in DbRole]


async def _drop_logins(pg_server: str, prefixes: list[str]) -> None:
    for prefix in prefixes:
        for role in DbRole:
            await query(pg_server, "roles_drop_login", parts={"login": role.login_of(prefix)})


@pytest.fixture
async def installs(pg_server: str) -> AsyncIterator[tuple[Install, Install]]:
    """Two databases of this server, each migrated with a random role prefix of its own."""
    tag = secrets.token_hex(4)
    names = {f"t{tag}a": f"smuves_install_{tag}_a", f"t{tag}b": f"smuves_install_{tag}_b"}
    try:
        made = []
        for prefix, database in names.items():
            await query(pg_server, "database_create", parts={"db": database})
            install = Install(prefix, make_conninfo(pg_server, dbname=database))
            await migrate(install.url, role_prefix=prefix)
            made.append(install)
        yield made[0], made[1]
    finally:
        # The databases first: the logins' CONNECT grants go with them.
        for database in names.values():
            await query(pg_server, "database_drop", parts={"db": database})
        await _drop_logins(pg_server, list(names))


async def _connects(url: str) -> bool:
    try:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            await conn.execute(b"SELECT 1")
    except psycopg.OperationalError as refused:
        assert "permission denied for database" in str(refused)
        return False
    return True


async def test_only_an_installs_own_logins_may_connect_to_its_database(
    installs: tuple[Install, Install],
) -> None:
    a, b = installs
    for role in DbRole:
        assert await _connects(a.login_url(role))
        assert await _connects(b.login_url(role))
        assert not await _connects(a.login_url(role, of=b))
        assert not await _connects(b.login_url(role, of=a))
        # Nor the default logins, which another install on this server may use.
        default = make_conninfo(a.url, user=role.login)
        assert not await _connects(default)
    [access] = await query(a.url, "roles_database_access", logins=a.logins + b.logins)
    assert access == {"public": False, "logins": sorted(a.logins)}


async def test_a_runtime_pool_logs_in_as_its_installs_prefixed_login(
    installs: tuple[Install, Install],
) -> None:
    a, _ = installs
    for role in DbRole:
        async with (
            open_pool(a.settings(), role=role, max_size=1) as pool,
            pool.connection() as conn,
        ):
            [me] = await query(conn, "roles_me")
        assert (me["session_user"], me["current_user"]) == (role.login_of(a.prefix),) * 2


async def test_migrating_one_install_leaves_the_other_installs_passwords(
    installs: tuple[Install, Install], pg_server: str
) -> None:
    a, b = installs
    assert await set_login_passwords(b.url, b.settings(password="b-secret")) == b.logins
    before = await query(pg_server, "roles_verifiers", logins=b.logins)
    assert all(r["verifier"].startswith("SCRAM-SHA-256$") for r in before)

    await migrate(a.url, role_prefix=a.prefix)
    assert await set_login_passwords(a.url, a.settings(password="a-secret")) == a.logins

    assert await query(pg_server, "roles_verifiers", logins=b.logins) == before
    mine = await query(pg_server, "roles_verifiers", logins=a.logins)
    assert [r["name"] for r in mine] == sorted(a.logins)
    assert all(r["verifier"].startswith("SCRAM-SHA-256$") for r in mine)


async def test_the_default_prefix_keeps_todays_logins(empty_db_url: str) -> None:
    assert Settings().role_prefix == ""
    assert [r.login_of("") for r in DbRole] == ["smuves_api_login", "smuves_worker_login"]
    derived = with_login_urls(Settings(), empty_db_url)
    assert conninfo_to_dict(derived.api_database_url or "")["user"] == "smuves_api_login"
    await migrate(empty_db_url)
    [access] = await query(empty_db_url, "roles_database_access", logins=[r.login for r in DbRole])
    assert access == {"public": False, "logins": ["smuves_api_login", "smuves_worker_login"]}


def test_a_prefix_that_is_not_a_lower_case_identifier_is_refused() -> None:
    for bad in ("Acme", "1st", "a-b", "a b", "a;drop", "x" * 41):
        with pytest.raises(ValidationError, match="role_prefix"):
            Settings(role_prefix=bad)


async def test_a_prefixed_login_with_more_rights_stops_the_migration(
    empty_db_url: str, pg_server: str
) -> None:
    prefix = f"t{secrets.token_hex(4)}"
    login = DbRole.APP.login_of(prefix)
    await query(pg_server, "roles_create_strong_login", parts={"login": login})
    try:
        with pytest.raises(MigrationError, match=f"role {login} exists with more rights"):
            await migrate(empty_db_url, role_prefix=prefix)
    finally:
        await _drop_logins(pg_server, [prefix])
