"""Measure what a re-sync wrote to Postgres, for scripts/bench_sync.py --resync.

    probe = await ResyncProbe.start(conn, portal_id)      # a superuser connection
    ...                                                   # the re-sync
    cost = await probe.finish()                           # rows written, WAL, table size

Rows written are the rows whose xmin moved (new row versions) or that are new. WAL is read two
ways: the distance between `pg_current_wal_lsn()` before and after, which counts everything
the whole server wrote meanwhile (other databases too), and, where the pg_walinspect
extension is available, only the records of this database's transactions (a temporary
replication slot holds the WAL meanwhile, so a busy server does not recycle it before it is
read). Their SQL is in smuves_sync/testing/sql/resync_probe.sql.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from smuves_sync.db.driver_errors import translated
from smuves_sync.errors import DatabaseError
from smuves_sync.testing.queries import testing_queries

log = logging.getLogger(__name__)


async def _one(conn: AsyncConnection[Any], name: str, **params: Any) -> dict[str, Any]:
    with translated():
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(testing_queries()[name], params)
            row = await cur.fetchone()
    assert row is not None
    return row


async def row_versions(conn: AsyncConnection[Any], portal_id: int) -> dict[str, str]:
    """'type:id' -> xmin of every content row of the portal."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(testing_queries()["probe_row_versions"], {"portal_id": portal_id})
        return {row["key"]: row["xmin"] for row in await cur.fetchall()}


async def content_items_size(conn: AsyncConnection[Any]) -> int:
    """content_items on disk: heap, TOAST and indexes, in bytes."""
    return int((await _one(conn, "probe_content_items_size"))["total_bytes"])


async def content_items_fillfactor(conn: AsyncConnection[Any]) -> int:
    """content_items' fillfactor (100 when none is set)."""
    return int((await _one(conn, "probe_content_items_fillfactor"))["fillfactor"])


async def content_items_updates(conn: AsyncConnection[Any]) -> dict[str, int]:
    """Updates of content_items so far, and how many were HOT."""
    row = await _one(conn, "probe_content_items_updates")
    return {key: int(value) for key, value in row.items()}


@dataclass(frozen=True, slots=True)
class ResyncCost:
    """What one re-sync wrote."""

    rows_written: int
    wal_bytes: int  # the whole server's
    wal_bytes_this_database: int | None  # None: pg_walinspect is not available
    wal_bytes_full_page_images: int | None  # of this database's
    wal_bytes_content_items: int | None
    size_before: int
    size_after: int


class ResyncProbe:
    """Readings before a re-sync, compared with the same readings after it."""

    def __init__(
        self,
        conn: AsyncConnection[Any],
        portal_id: int,
        versions: dict[str, str],
        lsn: str,
        size: int,
        slot: str | None,
    ) -> None:
        self.conn = conn
        self.portal_id = portal_id
        self.versions = versions
        self.lsn = lsn
        self.size = size
        self.slot = slot

    @classmethod
    async def start(cls, conn: AsyncConnection[Any], portal_id: int) -> ResyncProbe:
        """Take the readings before (`conn`: autocommit, a superuser for pg_walinspect)."""
        slot: str | None = f"smuves_resync_probe_{conn.info.backend_pid}"
        try:
            await _one(conn, "probe_hold_wal", slot=slot)
        except DatabaseError as exc:
            log.warning("WAL not held for reading (it may be recycled first): %s", exc)
            slot = None
        versions = await row_versions(conn, portal_id)
        size = await content_items_size(conn)
        lsn = str((await _one(conn, "probe_wal_position"))["lsn"])
        return cls(conn, portal_id, versions, lsn, size, slot)

    async def finish(self) -> ResyncCost:
        """Take the readings after and compare."""
        try:
            return await self._compare()
        finally:
            if self.slot is not None:
                await _one(self.conn, "probe_release_wal", slot=self.slot)

    async def _compare(self) -> ResyncCost:
        until = str((await _one(self.conn, "probe_wal_position"))["lsn"])
        between = await _one(self.conn, "probe_wal_between", since=self.lsn, until=until)
        wal = int(between["bytes"])
        after = await row_versions(self.conn, self.portal_id)
        written = sum(1 for key, xmin in after.items() if self.versions.get(key) != xmin)
        ours: int | None = None
        images: int | None = None
        content: int | None = None
        try:
            with translated():
                await self.conn.execute(testing_queries()["probe_walinspect"])
            found = await _one(self.conn, "probe_wal_of_this_database", since=self.lsn, until=until)
            ours, content = int(found["bytes"]), int(found["content_bytes"])
            images = int(found["full_page_image_bytes"])
        except DatabaseError as exc:
            # No pg_walinspect here, or no right to read WAL: the server-wide figure only.
            log.warning("WAL of this database not measured: %s", exc)
        return ResyncCost(
            rows_written=written,
            wal_bytes=wal,
            wal_bytes_this_database=ours,
            wal_bytes_full_page_images=images,
            wal_bytes_content_items=content,
            size_before=self.size,
            size_after=await content_items_size(self.conn),
        )


def total(costs: list[ResyncCost]) -> ResyncCost:
    """Several re-syncs measured one by one, as one (None where any is None)."""

    def add(values: list[int | None]) -> int | None:
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    return ResyncCost(
        rows_written=sum(c.rows_written for c in costs),
        wal_bytes=sum(c.wal_bytes for c in costs),
        wal_bytes_this_database=add([c.wal_bytes_this_database for c in costs]),
        wal_bytes_full_page_images=add([c.wal_bytes_full_page_images for c in costs]),
        wal_bytes_content_items=add([c.wal_bytes_content_items for c in costs]),
        size_before=costs[0].size_before,
        size_after=costs[-1].size_after,
    )
