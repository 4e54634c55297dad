"""Throw-away databases for benchmarks and experiments.

    async with scratch_server(args.database_url) as server_url:    # or an embedded one
        async with scratch_database(server_url) as url:   # created and migrated; dropped on exit
            n = await seed_backlog(url, portals=4000, owners=40)  # 36,000 pending fetch jobs

`server_url` must be allowed to CREATE DATABASE (a superuser, or a role with CREATEDB that
can also create the smuves roles).
"""

from __future__ import annotations

import secrets
import tempfile
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from psycopg import AsyncConnection, sql
from psycopg.conninfo import make_conninfo

from smuves_sync.db.embedded import embedded_server
from smuves_sync.db.migrations import migrate
from smuves_sync.models import ContentType, JobKind
from smuves_sync.testing.queries import testing_queries


async def _admin(server_url: str, name: str, database: str) -> None:
    statement = sql.SQL(testing_queries()[name]).format(db=sql.Identifier(database))
    async with await AsyncConnection.connect(server_url, autocommit=True) as conn:
        await conn.execute(statement)


@asynccontextmanager
async def scratch_server(url: str | None) -> AsyncIterator[str]:
    """`url`, else an embedded PostgreSQL in a temporary directory for as long as this is
    open: a server to create scratch databases on."""
    if url:
        yield url
        return
    with tempfile.TemporaryDirectory(prefix="smvb") as tmp:
        async with embedded_server(Path(tmp) / "pg") as embedded:
            yield embedded


@asynccontextmanager
async def scratch_database(
    server_url: str, *, prefix: str = "smuves_scratch", migrated: bool = True
) -> AsyncIterator[str]:
    """A new database on the server of `server_url`, migrated unless not `migrated` (an empty
    one for a peer's schema); dropped on exit."""
    name = f"{prefix}_{secrets.token_hex(4)}"
    await _admin(server_url, "database_create", name)
    try:
        url = make_conninfo(server_url, dbname=name)
        if migrated:
            await migrate(url)
        yield url
    finally:
        await _admin(server_url, "database_drop", name)


async def seed_backlog(
    url: str,
    *,
    portals: int,
    first_portal: int = 1,
    owners: int = 1,
    kind: JobKind = JobKind.FETCH,
    content_types: Sequence[ContentType] = tuple(ContentType),
) -> int:
    """Plant `portals` portals of `owners` owners with one run and one pending job per type each."""
    q = testing_queries()
    async with await AsyncConnection.connect(url, autocommit=True) as conn:
        owner_ids = []
        for _ in range(owners):
            email = f"seed-{uuid.uuid4().hex}@example.com"
            cur = await conn.execute(q["seed_user"], {"email": email})
            row = await cur.fetchone()
            assert row is not None
            owner_ids.append(row[0])
        cur = await conn.execute(
            q["seed_backlog"],
            {
                "owner_ids": owner_ids,
                "portals": portals,
                "first_portal": first_portal,
                "kind": str(kind),
                "content_types": [str(t) for t in content_types],
                "run_after": None,
            },
        )
        planted = len(await cur.fetchall())
        # a live queue has statistics; a freshly seeded table would mislead the planner
        await conn.execute(q["seed_analyze"])
        return planted


async def open_runs(url: str) -> int:
    """How many runs at `url` are not settled (pending or running): after a drain that
    finished every job, a run still open is one the queue failed to settle."""
    async with await AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(testing_queries()["seed_runs_open"])
        row = await cur.fetchone()
        assert row is not None
        return int(row[0])
