"""What storing a page writes, through the real SQL: a row's xmin moves only when it changed.

A re-sync of unchanged objects must not write content_items at all: no new row version, no
dead tuple, no WAL beyond the fetch's bookkeeping. So an upsert leaves equal rows untouched
(not even locked), and what a fetch saw lives in fetch_seen, per job, not on every row.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg.rows import scalar_row

from smuves_sync.content_fields import ContentRecord
from smuves_sync.db import Database
from smuves_sync.db.content import (
    NewPages,
    content_page,
    content_page_columns,
    content_rows,
    content_upsert_page,
)
from smuves_sync.db.fetch_seen import (
    fetch_seen_count,
    fetch_seen_intact,
    fetch_seen_mark_deleted,
    fetch_seen_start,
    fetch_seen_sync_confirm,
    fetch_seen_sync_get,
    fetch_seen_unseen,
)
from smuves_sync.db.jobs import job_complete_many, job_get
from smuves_sync.db.runs import run_operator_stop
from smuves_sync.errors import DatabaseRefused
from smuves_sync.models import ContentType, Job, JobStatus, Run, RunStatus
from tests.support import query
from tests.support.factories import Factory

TYPE = ContentType.SITE_PAGE


def page(first: int, count: int, **changes: Any) -> list[ContentRecord]:
    """Site pages `first` … `first + count - 1`; `changes` go into every raw object."""
    items = []
    for n in range(first, first + count):
        raw: dict[str, Any] = {
            "id": str(n),
            "name": f"Page {n}",
            "slug": f"page-{n}",
            "htmlTitle": "x" * 400,
            **changes,
        }
        items.append(
            ContentRecord(
                content_type=str(TYPE),
                hubspot_id=str(n),
                name=raw["name"],
                slug=raw["slug"],
                url=f"https://example.com/page-{n}",
                state="PUBLISHED",
                language="en",
                updated_at=datetime(2030, 1, 1, tzinfo=UTC),
                archived=False,
                raw=raw,
            )
        )
    return items


async def store(
    db: Database,
    factory: Factory,
    run: Run,
    items: list[ContentRecord],
    new_pages: NewPages | None = None,
) -> int:
    """Store a page as a worker under a lease of the run's portal (with `new_pages`, as a
    fetch job does: tried as new objects first while the hint holds)."""
    async with db.for_job(await factory.lease(run.portal_id)) as scoped:
        return await content_upsert_page(
            scoped, run.portal_id, TYPE, run.id, items, new_pages=new_pages
        )


async def versions(db: Database, portal_id: int) -> dict[str, str]:
    """Each row's xmin: it moves exactly when the row is written."""
    rows = await query(db, "content_rows_of_type", portal_id=portal_id, content_type=TYPE)
    return {row["hubspot_id"]: row["xmin"] for row in rows}


async def test_storing_unchanged_objects_again_writes_no_row(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    again = await factory.run(first.portal_id)
    for start in range(1, 301, 100):
        assert await store(worker_db, factory, first, page(start, 100)) == 100
    before = await versions(db, first.portal_id)

    written = [
        await store(worker_db, factory, again, page(start, 100)) for start in range(1, 301, 100)
    ]

    assert written == [0, 0, 0]
    assert await versions(db, first.portal_id) == before


async def insert_new(scoped: Database, run: Run, items: list[ContentRecord]) -> int | None:
    """The first statement a page is tried with: its objects inserted as new ones."""
    columns = content_page_columns(items)[0]
    params = {
        "portal_id": run.portal_id,
        "content_type": str(TYPE),
        "run_id": run.id,
        "first_id": columns["hubspot_ids"][0],
        "fields": columns["fields"],
        "documents": columns["documents"],
    }
    inserted: int | None = await scoped.one("content_insert_new_page", params, row=scalar_row)
    return inserted


async def test_a_page_of_new_objects_is_inserted_and_one_holding_a_stored_object_is_left_alone(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    lease = await factory.lease(run.portal_id)
    async with worker_db.for_job(lease) as scoped:
        assert await insert_new(scoped, run, page(1, 5)) == 5
    before = await versions(db, run.portal_id)

    async with worker_db.for_job(lease) as scoped:
        # its first object is stored: nothing is tried
        assert await insert_new(scoped, run, page(1, 3)) is None
        # a later one is: what was inserted before it is rolled back, and the page goes on
        assert await insert_new(scoped, run, [*page(6, 2), *page(5, 1, body="edited")]) is None
        assert await insert_new(scoped, run, page(8, 1)) == 1

    after = await versions(db, run.portal_id)
    assert {h: after[h] for h in before} == before
    assert sorted(after, key=int) == ["1", "2", "3", "4", "5", "8"]


async def test_a_job_inserts_pages_of_new_objects_until_one_holds_a_stored_object(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    hint = NewPages()
    written = []
    for start in (1, 101, 150):  # the third page holds 150-200, stored by the second
        written.append(await store(worker_db, factory, run, page(start, 100), hint))
        if start < 150:
            assert hint.likely
    assert not hint.likely
    assert written == [100, 100, 49]  # 150-200 unchanged: not written again
    assert len(await versions(db, run.portal_id)) == 249


async def test_new_objects_after_a_stored_one_are_stored_with_it_compared(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    again = await factory.run(first.portal_id)
    await store(worker_db, factory, first, page(1, 5))
    before = await versions(db, first.portal_id)

    mixed = [*page(6, 2), *page(5, 1, body="edited"), *page(4, 1)]
    hint = NewPages()
    assert await store(worker_db, factory, again, mixed, hint) == 3
    assert not hint.likely  # the job's next pages are compared straight away

    after = await versions(db, first.portal_id)
    moved = sorted((h for h in after if after[h] != before.get(h)), key=int)
    assert moved == ["5", "6", "7"]
    rows = {
        r["hubspot_id"]: r
        for r in await query(
            db, "content_rows_of_type", portal_id=first.portal_id, content_type=TYPE
        )
    }
    assert rows["5"]["data"]["body"] == "edited" and rows["6"]["first_seen_run"] == again.id


async def test_a_page_transaction_commits_without_waiting_for_the_flush(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    lease = await factory.lease(run.portal_id)
    [outside] = await query(worker_db, "check_page_settings")
    async with worker_db.for_job(lease, async_commit=True) as scoped:
        inside = await query(scoped, "check_page_settings")
        assert await store(scoped, factory, run, page(1, 3)) == 3
    async with worker_db.for_job(lease) as scoped:
        durable = await query(scoped, "check_page_settings")

    assert inside == [{"portal_id": str(run.portal_id), "synchronous_commit": "off"}]
    # SET LOCAL: the setting ends with the page's transaction
    assert durable == [
        {"portal_id": str(run.portal_id), "synchronous_commit": outside["synchronous_commit"]}
    ]
    assert len(await versions(db, run.portal_id)) == 3


async def test_exactly_the_changed_rows_are_written(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    again = await factory.run(first.portal_id)
    await store(worker_db, factory, first, page(1, 10))
    async with worker_db.for_job(await factory.lease(first.portal_id)) as scoped:
        await fetch_seen_mark_deleted(scoped, first.portal_id, TYPE, first.id, ["10"])
    before = await versions(db, first.portal_id)
    items = page(1, 10)
    items[1] = page(2, 1, body="edited")[0]  # the document
    items[2] = dataclasses.replace(items[2], name="Renamed")  # a promoted field alone
    items[3] = dataclasses.replace(items[3], archived=True)  # the archived flag
    items[4] = dataclasses.replace(items[4], updated_at=datetime(2031, 1, 1, tzinfo=UTC))
    # items[9] was marked deleted: seen again, it is live again

    assert await store(worker_db, factory, again, [*items, *page(11, 1)]) == 6

    after = await versions(db, first.portal_id)
    moved = sorted((h for h in after if after[h] != before.get(h)), key=int)
    assert moved == ["2", "3", "4", "5", "10", "11"]
    rows = {
        r["hubspot_id"]: r
        for r in await query(
            db, "content_rows_of_type", portal_id=first.portal_id, content_type=TYPE
        )
    }
    assert {h for h, r in rows.items() if r["changed_run"] == again.id} == set(moved)
    assert rows["10"]["deleted_at"] is None and rows["4"]["archived"]
    assert rows["3"]["name"] == "Renamed" and rows["2"]["data"]["body"] == "edited"


async def test_with_a_repeatable_read_transaction_open_a_resync_does_not_grow_the_table(
    factory: Factory, worker_db: Database, db: Database, db_url: str
) -> None:
    first = await factory.run()
    for start in range(1, 1001, 100):
        await store(worker_db, factory, first, page(start, 100))
    # An analytics session holding a snapshot: vacuum can reclaim nothing while it lasts.
    async with await psycopg.AsyncConnection.connect(db_url) as reader:
        await reader.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
        async with reader.transaction():
            await reader.execute("SELECT count(*) FROM public.content_items")
            [size_before] = await query(db, "content_items_size")
            for cycle in range(3):
                again = await factory.run(first.portal_id)
                for start in range(1, 1001, 100):
                    assert await store(worker_db, factory, again, page(start, 100)) == 0, cycle
            [size_after] = await query(db, "content_items_size")
    assert size_after == size_before
    assert size_after["dead_tuples_written"] == size_before["dead_tuples_written"]


async def test_what_a_job_saw_is_kept_until_it_finishes_and_survives_a_retry(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING)
    other = await factory.job(
        await factory.run(run.portal_id),
        content_type=ContentType.BLOG_POST,
        status=JobStatus.RUNNING,
    )
    await store(worker_db, factory, run, page(1, 5))
    async with worker_db.for_job(job) as scoped:
        await fetch_seen_start(scoped, job.id, run.portal_id)
        await content_upsert_page(scoped, run.portal_id, TYPE, run.id, page(1, 3), seen_by=job.id)
        await content_upsert_page(scoped, run.portal_id, TYPE, run.id, page(3, 1), seen_by=job.id)
        assert await fetch_seen_count(scoped, job.id) == 3
        assert await fetch_seen_intact(scoped, job.id)
        assert not await fetch_seen_intact(scoped, other.id)
        unseen = [await fetch_seen_unseen(scoped, job, after=after, limit=1) for after in ("", "4")]
        assert unseen == [["4"], ["5"]]
    await factory.seen(other, "1")

    # Back to pending for a retry: the next attempt resumes and still needs them.
    await query(db, "sync_job_status", job_id=job.id, status="pending")
    assert len(await query(db, "sync_seen_of_job", job_id=job.id)) == 4
    for status in ("completed", "failed"):
        await query(db, "sync_job_status", job_id=job.id, status="running")  # a new lease
        await content_seen_again(worker_db, await job_get(db, job.id))
        await query(db, "sync_job_status", job_id=job.id, status=status)
        assert await query(db, "sync_seen_of_job", job_id=job.id) == [], status
    assert len(await query(db, "sync_seen_of_job", job_id=other.id)) == 1
    await query(db, "sync_delete_job", job_id=other.id)
    assert await query(db, "sync_seen_of_job", job_id=other.id) == []


async def test_one_statement_finishing_jobs_forgets_what_each_of_them_saw_and_no_more(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    # A batch completion finishes its jobs in one statement, which the trigger sees whole;
    # the job still running keeps its rows until it is stopped.
    run = await factory.run(status=RunStatus.RUNNING)
    done = [
        await factory.job(run, content_type=content_type, status=JobStatus.RUNNING)
        for content_type in (ContentType.SITE_PAGE, ContentType.BLOG_POST)
    ]
    running = await factory.job(
        run, content_type=ContentType.LANDING_PAGE, status=JobStatus.RUNNING
    )
    for job in (*done, running):
        await factory.seen(job, "1", "2")
    leases = [(job.id, job.lease_token) for job in done if job.lease_token is not None]
    assert await job_complete_many(worker_db, leases) == sorted(job.id for job in done)
    for job in done:
        assert await query(db, "sync_seen_of_job", job_id=job.id) == []
    assert len(await query(db, "sync_seen_of_job", job_id=running.id)) == 2
    assert await run_operator_stop(db, run.id) is not None
    assert await query(db, "sync_seen_of_job", job_id=running.id) == []
    # a stopped run settles without a notice: someone stopped it
    assert await query(db, "settle_run_notices", run_id=run.id) == [
        {"status": "stopped", "notices": 0}
    ]


async def content_seen_again(db: Database, job: Job | None) -> None:
    assert job is not None
    async with db.for_job(job) as scoped:
        await fetch_seen_start(scoped, job.id, job.portal_id)


async def test_a_worker_sees_and_writes_only_its_portals_seen_ids(
    factory: Factory, worker_db: Database
) -> None:
    job = await factory.job(status=JobStatus.RUNNING)
    other = await factory.portal()
    await factory.seen(job, "1", "2")

    lease = await factory.lease(other)
    async with worker_db.for_job(lease) as scoped:
        assert await fetch_seen_count(scoped, job.id) == 0
    with pytest.raises(DatabaseRefused):
        async with worker_db.for_job(lease) as scoped:
            await fetch_seen_start(scoped, job.id, job.portal_id)


async def test_synced_at_is_the_types_last_confirmation_or_a_later_write(
    factory: Factory, worker_db: Database
) -> None:
    first = await factory.run()
    portal = first.portal_id
    await store(worker_db, factory, first, page(1, 3))
    again = await factory.run(portal)
    lease = await factory.lease(portal)
    async with worker_db.for_job(lease) as scoped:
        await fetch_seen_sync_confirm(
            scoped, portal, TYPE, run_id=again.id, job_id=1, seen=3, deleted=0
        )
        confirmed = await fetch_seen_sync_get(scoped, portal, TYPE)
    assert confirmed is not None
    later = await factory.run(portal)
    await store(worker_db, factory, later, page(3, 1, body="edited"))  # after the confirmation

    async with worker_db.for_job(lease) as scoped:
        shown = (await content_page(scoped, portal, limit=10)).items
        rows = content_rows(scoped, portal, TYPE, with_data=False, include_deleted=False)
        exported = [row async for row in rows]
    synced = {item.hubspot_id: item.synced_at for item in shown}
    assert synced["1"] == synced["2"] == confirmed.confirmed_at
    assert synced["3"] > confirmed.confirmed_at
    assert {row["hubspot_id"]: row["synced_at"] for row in exported} == synced
