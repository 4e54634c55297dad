"""The test SQL, loaded once, and the one way to run a named statement of it.

    rows = await query(db, "sync_jobs_of_portal", portal_id=portal)     # as the login role
    await query(pg_server, "database_drop", parts={"db": name})         # a URL: its own connection

Statements come from ``tests/sql/*.sql`` and from the testing aids' own file
(``smuves_sync/testing/sql/``, which the benchmarks share), in the product's named-query
format. Checks read rows as the login role, so row-level security does not hide what a test
looks for; a test reads through the role under test by passing that role's pool.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, LiteralString

import psycopg
from psycopg import AsyncConnection, sql
from psycopg.rows import TupleRow, dict_row

from smuves_sync.db import Database, Pool
from smuves_sync.db.queries import load_queries
from smuves_sync.testing.queries import testing_queries

Target = Database | Pool | AsyncConnection[TupleRow] | str


def _load() -> Mapping[str, LiteralString]:
    merged = dict(load_queries(Path(__file__).parents[1] / "sql"))
    for name, body in testing_queries().items():
        if name in merged:
            raise ValueError(f"test query {name!r} is also a query of smuves_sync/testing/sql")
        merged[name] = body
    return merged


TEST_SQL = _load()


def statement(
    name: str, parts: Mapping[str, str | sql.Composable] | None = None
) -> LiteralString | sql.Composed:
    """The named statement; `parts` fill its ``{placeholders}`` (a str becomes an identifier)."""
    if parts is None:  # the text as written: braces in it are SQL, not placeholders
        return TEST_SQL[name]
    fill = {
        key: sql.Identifier(value) if isinstance(value, str) else value
        for key, value in parts.items()
    }
    return sql.SQL(TEST_SQL[name]).format(**fill)


async def query(
    target: Target,
    name: str,
    /,
    *,
    parts: Mapping[str, str | sql.Composable] | None = None,
    **params: Any,
) -> list[dict[str, Any]]:
    """Run the named test statement on `target`; its rows as dicts ([] when it returns none).

    `target`: a pool (a connection of it, in autocommit), a `Database` (the connection of its
    scope, else one of its pool's), a connection (inside whatever transaction it is in), or a
    URL (a connection of its own, autocommit: what CREATE DATABASE needs).
    """
    if isinstance(target, str):
        async with await psycopg.AsyncConnection.connect(target, autocommit=True) as conn:
            return await query(conn, name, parts=parts, **params)
    if not isinstance(target, AsyncConnection):
        async with target.connection() as conn:
            return await query(conn, name, parts=parts, **params)
    async with target.cursor(row_factory=dict_row) as cur:
        await cur.execute(statement(name, parts), params)
        return await cur.fetchall() if cur.description else []


async def query_as(
    pool: Pool,
    name: str,
    /,
    *,
    as_portal: int | None = None,
    as_user: uuid.UUID | None = None,
    lease: tuple[int, uuid.UUID | None] | None = None,
    **params: Any,
) -> list[dict[str, Any]]:
    """The named test statement in one transaction of `pool`, scoped to a portal or a user
    the way the product scopes its connections (`Database.for_portal`, `as_user`); `lease`
    (a job id and a lease token) names a job's lease as `Database.for_job` does."""
    async with pool.connection() as conn, conn.transaction():
        if as_portal is not None:
            await conn.execute(statement("trust_set_portal"), {"portal_id": as_portal})
        if lease is not None:
            job_id, lease_token = lease
            params_of_lease = {"job_id": job_id, "lease_token": lease_token}
            await conn.execute(statement("trust_set_lease"), params_of_lease)
        if as_user is not None:
            await conn.execute(statement("trust_set_user"), {"user_id": as_user})
        return await query(conn, name, **params)
