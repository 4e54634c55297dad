"""A content row's portal exists (content_items_portal_exists): checked once per statement
by triggers instead of a foreign key's query per row, with the same outcomes: a row for no
portal is refused, a page keeps its portal from being deleted until it commits, and a
deleted portal's content and history go with it (test_content_versions)."""

from __future__ import annotations

import psycopg
import pytest

from smuves_sync.db import Database
from smuves_sync.db.content import content_upsert_page
from smuves_sync.errors import DatabaseError
from smuves_sync.models import ContentType
from tests.integration.test_content_writes import page
from tests.support import query
from tests.support.factories import Factory

TYPE = ContentType.SITE_PAGE
MISSING = 987_654_321


async def rows(db: Database, portal_id: int) -> list[str]:
    found = await query(db, "content_rows_of_type", portal_id=portal_id, content_type=TYPE)
    return [row["hubspot_id"] for row in found]


async def test_a_page_for_a_portal_that_does_not_exist_is_refused(
    factory: Factory, db: Database
) -> None:
    run = await factory.run()
    # as the operator: a worker holds no lease of a portal that does not exist
    with pytest.raises(DatabaseError, match="portal"):
        async with db.transaction() as scoped:
            await content_upsert_page(scoped, MISSING, TYPE, run.id, page(1, 3))
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        await query(
            db.pool, "content_insert_row", portal_id=MISSING, content_type=TYPE, hubspot_id="1"
        )
    assert await rows(db, MISSING) == []


async def test_a_row_moves_only_to_a_portal_that_exists(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    other = await factory.portal()
    async with worker_db.for_job(await factory.lease(run.portal_id)) as scoped:
        await content_upsert_page(scoped, run.portal_id, TYPE, run.id, page(1, 2))

    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        await query(db.pool, "content_move_rows", portal_id=run.portal_id, to_portal=MISSING)
    await query(db.pool, "content_move_rows", portal_id=run.portal_id, to_portal=other)

    assert (await rows(db, run.portal_id), await rows(db, other)) == ([], ["1", "2"])


async def test_a_page_holds_its_portal_until_it_commits(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    lease = await factory.lease(run.portal_id)
    async with worker_db.for_job(lease, async_commit=True) as scoped:
        await content_upsert_page(scoped, run.portal_id, TYPE, run.id, page(1, 2))
        # FOR KEY SHARE, as the foreign key took it: a DELETE of the portal would wait
        with pytest.raises(psycopg.errors.LockNotAvailable):
            await query(db.pool, "portal_lock_nowait", portal_id=run.portal_id)
    assert await query(db.pool, "portal_lock_nowait", portal_id=run.portal_id) == [
        {"id": run.portal_id}
    ]
