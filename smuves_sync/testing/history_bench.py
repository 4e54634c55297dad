"""What scripts/bench_sync.py's history phase sets up and reads beside the product's queries:

- `fetch_job_running`: a fetch run whose job of one type runs, as while a worker stores its
  pages (the history triggers take their run from it, and the worker writes under its lease);
- `history_off`: the same database without history (content_items' history triggers
  disabled), the yardstick of what history costs;
- `storage`: bytes (table, TOAST, indexes: pg_total_relation_size) and rows of content_items
  and content_versions.

Their SQL is in smuves_sync/testing/sql/history_bench.sql; they run as the login role.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import AsyncConnection
from psycopg.rows import class_row

from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job
from smuves_sync.testing.queries import testing_queries


@dataclass(frozen=True, slots=True)
class Storage:
    items_bytes: int
    items: int
    versions_bytes: int
    # every version (content_history), and the rows of content_versions among them (a first
    # version still current is its row of content_items)
    versions: int
    version_rows: int
    documents: int


async def fetch_job_running(url: str, portal_id: int, content_type: ContentType) -> Job:
    """Plant a running fetch job of `content_type` in a new run; the job, with its lease."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    return await plant_job(url, "history_bench_fetch_job", params)


async def plant_job(url: str, statement: str, params: dict[str, object]) -> Job:
    """The job the named statement plants (it returns the job's row), in the database of
    `url`."""
    async with (
        await AsyncConnection.connect(url, autocommit=True) as conn,
        conn.cursor(row_factory=model_row(Job)) as cur,
    ):
        await cur.execute(testing_queries()[statement], params)
        job = await cur.fetchone()
    assert job is not None
    return job


async def history_off(url: str) -> None:
    """Disable content_items' history triggers in the database of `url`."""
    async with await AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(testing_queries()["history_bench_triggers_off"])


async def storage(url: str) -> Storage:
    """What content_items and content_versions take now."""
    async with (
        await AsyncConnection.connect(url, autocommit=True) as conn,
        conn.cursor(row_factory=class_row(Storage)) as cur,
    ):
        await cur.execute(testing_queries()["history_bench_storage"])
        found = await cur.fetchone()
    assert found is not None
    return found
