"""Shared bits of the queue tests: a fixed clock and reads of outcomes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from psycopg.rows import dict_row

from smuves_sync.db import Pool
from smuves_sync.db.queries import load_queries

# Injected "now" for the queue functions: far from the real clock, so that planted rows
# are due (their run_after defaults to the real now) and nothing depends on timing.
T0 = datetime(2031, 1, 1, 12, 0, tzinfo=UTC)

CHECKS = load_queries(Path(__file__).parents[1] / "sql")


async def read(pool: Pool, name: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of the named check query, as the pool's role."""
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(CHECKS[name], params)
        return await cur.fetchall()
