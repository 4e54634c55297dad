"""What scripts/bench_sync.py sets beside `content_upsert_page` (db/content.py), which is
what the fetch handler uses:

- `content_upsert_one_by_one`: the naive page store, one INSERT per object (the baseline);
- `content_parse_only`: the page sent as `content_upsert_page` sends it, with Postgres doing
  nothing but parse the documents into jsonb, the largest part of storing them (the bound).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from smuves_sync.db.content import ContentRow, _page_columns
from smuves_sync.db.database import Database
from smuves_sync.db.queries import queries
from smuves_sync.models import ContentType


async def content_upsert_one_by_one(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    items: Sequence[ContentRow],
) -> int:
    """Store a page with one statement per object, on the scoped transaction of `db`."""
    if db._conn is None:
        raise RuntimeError("content_upsert_one_by_one needs a transaction (db.for_portal)")
    query = queries()["content_upsert_one"]
    async with db._conn.cursor() as cur:
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


async def content_parse_only(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    items: Sequence[ContentRow],
) -> int:
    """Have Postgres parse the page's documents into jsonb and store nothing; how many."""
    # Same signature as the page stores, so the benchmark drives all three alike.
    del portal_id, content_type, run_id
    documents = {"documents": _page_columns(items)["documents"]}
    return int(await db.one("content_parse_documents", documents, row=scalar_row) or 0)
