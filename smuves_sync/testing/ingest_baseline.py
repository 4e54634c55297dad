"""What scripts/bench_sync.py sets beside `content_upsert_page` (db/content.py), which is
what the fetch handler uses:

- `content_upsert_one_by_one`: the naive page store, one INSERT per object (the baseline);
- `content_parse_only`: the page sent as `content_upsert_page` sends it, with Postgres doing
  nothing but parse the documents into jsonb, the largest part of storing them (the bound);
- `content_store_bare`: the same, the documents also written into a table with no key,
  index, trigger or policy, compressed as content_items.data is (the floor: what storing
  the documents costs before anything of ours, made by `floor_table_create` in a scratch
  database).

Each runs in one transaction of a worker-role pool under the lease of a job of one portal,
as a fetch job's page does. Their SQL is in smuves_sync/testing/sql/ingest_baseline.sql.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from psycopg import AsyncConnection
from psycopg.rows import TupleRow
from psycopg.types.json import Jsonb

from smuves_sync.content_fields import ContentRecord
from smuves_sync.db import Pool, queries
from smuves_sync.db.content import content_page_columns
from smuves_sync.models import ContentType, Job
from smuves_sync.testing.queries import testing_queries


@asynccontextmanager
async def lease_transaction(
    pool: Pool, lease: Job, *, async_commit: bool = False
) -> AsyncIterator[AsyncConnection[TupleRow]]:
    """A connection of `pool` in a transaction under `lease`, a running job's (its portal's
    rows, which it may write); with `async_commit`, committed as a fetched page is."""
    params = {"portal_id": lease.portal_id, "job_id": lease.id, "lease_token": lease.lease_token}
    setting = "session_set_job_async_commit" if async_commit else "session_set_job"
    async with pool.connection() as conn, conn.transaction():
        await conn.execute(queries()[setting], params)
        yield conn


async def content_upsert_one_by_one(
    pool: Pool, lease: Job, content_type: ContentType, run_id: int, items: Sequence[ContentRecord]
) -> int:
    """Store a page of the portal of `lease` with one statement per object, in one
    transaction; how many."""
    portal_id = lease.portal_id
    query = testing_queries()["content_upsert_one"]
    async with lease_transaction(pool, lease) as conn, conn.cursor() as cur:
        for item in items:
            await cur.execute(
                query,
                {
                    "portal_id": portal_id,
                    "content_type": str(content_type),
                    "run_id": run_id,
                    "hubspot_id": item.hubspot_id,
                    "name": item.name,
                    "slug": item.slug,
                    "url": item.url,
                    "state": item.state,
                    "language": item.language,
                    "hubspot_updated_at": item.updated_at,
                    "archived": item.archived,
                    "data": Jsonb(item.raw, dumps=lambda v: json.dumps(v, default=dict)),
                },
            )
    return len(items)


async def content_parse_only(pool: Pool, lease: Job, items: Sequence[ContentRecord]) -> int:
    """Have Postgres parse the page's documents into jsonb and store nothing; how many."""
    documents = content_page_columns(items)[0]["documents"]
    async with lease_transaction(pool, lease) as conn:
        cur = await conn.execute(
            testing_queries()["content_parse_documents"], {"documents": documents}
        )
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def floor_table_create(url: str) -> None:
    """Make the bare table `content_store_bare` writes, in the database of `url` (a scratch
    one: the product's databases have no such table)."""
    async with await AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(testing_queries()["content_floor_table_create"])


async def content_store_bare(pool: Pool, lease: Job, items: Sequence[ContentRecord]) -> int:
    """Write the page's documents, parsed, into the bare table and nothing else, in a
    transaction committed as a fetched page is; how many."""
    documents = content_page_columns(items)[0]["documents"]
    async with lease_transaction(pool, lease, async_commit=True) as conn:
        cur = await conn.execute(testing_queries()["content_store_bare"], {"documents": documents})
    return cur.rowcount
