"""Content history against Postgres: content_items' triggers write the versions
(migrations/functions/history.sql), and db/versions.py reads them back; whatever statement
writes content, one version per change."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg
import pytest

from smuves_sync.content_fields import ContentRecord
from smuves_sync.db import Database
from smuves_sync.db.content import content_upsert_page
from smuves_sync.db.versions import (
    ChangeFilter,
    ContentChange,
    changes_page,
    version_documents,
    versions_of_object,
    versions_prune,
)
from smuves_sync.errors import DatabaseRefused
from smuves_sync.models import ContentEvent, ContentType, JobStatus, RunStatus
from tests.integration.test_content_store import record
from tests.support import db_now, query
from tests.support.factories import Factory
from tests.support.sql import query_as

TYPE = ContentType.BLOG_POST
CREATED, UPDATED, DELETED = ContentEvent.CREATED, ContentEvent.UPDATED, ContentEvent.DELETED


async def fetch(
    factory: Factory,
    worker_db: Database,
    portal_id: int,
    items: list[ContentRecord],
    *,
    gone: tuple[str, ...] = (),
) -> int:
    """One fetch of TYPE by a new run, as the handler makes it: its job runs while the page is
    stored and the objects it did not see are marked deleted; then it completes. The run id."""
    run = await factory.run(portal_id, status=RunStatus.RUNNING)
    job = await factory.job(run, content_type=TYPE, status=JobStatus.RUNNING)
    async with worker_db.for_job(job) as scoped:
        await content_upsert_page(scoped, portal_id, TYPE, run.id, items)
    if gone:
        await query(
            factory.pool,
            "versions_mark_deleted",
            portal_id=portal_id,
            content_type=str(TYPE),
            hubspot_ids=list(gone),
        )
    await query(factory.pool, "versions_finish_job", job_id=job.id)
    return run.id


async def history(db: Database, portal_id: int, hubspot_id: str) -> list[tuple[Any, ...]]:
    """(version, event, from run, until run) of each version of the object."""
    found = await versions_of_object(db, portal_id, TYPE, hubspot_id)
    return [(v.version, v.event, v.seen_from_run, v.seen_until_run) for v in found]


async def documents(db: Database, portal_id: int, hubspot_id: str) -> list[Any]:
    """The document of every version of the object, oldest first."""
    numbers = [v.version for v in await versions_of_object(db, portal_id, TYPE, hubspot_id)]
    found = await version_documents(db, portal_id, TYPE, hubspot_id, numbers)
    return [found[n].document for n in numbers]


async def counts(db: Database, portal_id: int) -> tuple[int, int]:
    """(versions kept in content_versions, stored documents) of the portal: a first version
    still current lives in its row of content_items only."""
    [row] = await query(db.pool, "versions_count", portal_id=portal_id)
    return row["n"], row["documents"]


async def test_a_first_fetch_records_each_object_as_created_by_its_run(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    run = await fetch(factory, worker_db, portal, [record("1"), record("2")])

    for hubspot_id in ("1", "2"):
        assert await history(db, portal, hubspot_id) == [(1, CREATED, run, None)]
        assert await documents(db, portal, hubspot_id) == [record(hubspot_id).raw]
    # Each object was written once: its row is its first version, and its document.
    assert await counts(db, portal) == (0, 0)
    [version] = await versions_of_object(db, portal, TYPE, "1")
    assert version.current and version.hash


async def test_an_unchanged_re_sync_writes_no_version_whatever_it_rewrites(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    await fetch(factory, worker_db, portal, [record("1"), record("2")])
    before = await query(db.pool, "versions_rows", portal_id=portal)

    await fetch(factory, worker_db, portal, [record("1"), record("2")])
    await query(db.pool, "versions_touch_item", portal_id=portal, content_type=str(TYPE))

    assert await query(db.pool, "versions_rows", portal_id=portal) == before


async def test_a_first_sync_inserted_as_new_objects_then_re_synced_and_edited_has_exact_history(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await fetch(factory, worker_db, portal, [record("1"), record("2"), record("3")])
    await fetch(factory, worker_db, portal, [record("1"), record("2"), record("3")])
    # a new object first, then a stored one changed: the page is stored compared, whole
    edit = await fetch(factory, worker_db, portal, [record("4"), record("2", name="Renamed")])

    assert await history(db, portal, "1") == [(1, CREATED, first, None)]
    assert await history(db, portal, "3") == [(1, CREATED, first, None)]
    assert await history(db, portal, "2") == [(1, CREATED, first, edit), (2, UPDATED, edit, None)]
    assert await history(db, portal, "4") == [(1, CREATED, edit, None)]
    assert await documents(db, portal, "2") == [record("2").raw, record("2", name="Renamed").raw]
    assert await counts(db, portal) == (2, 1)


async def test_a_changed_document_keeps_the_previous_one_as_a_version(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await fetch(factory, worker_db, portal, [record("1"), record("2")])
    second = await fetch(factory, worker_db, portal, [record("1", name="Renamed"), record("2")])

    assert await history(db, portal, "1") == [
        (1, CREATED, first, second),
        (2, UPDATED, second, None),
    ]
    assert await history(db, portal, "2") == [(1, CREATED, first, None)]
    assert await documents(db, portal, "1") == [record("1").raw, record("1", name="Renamed").raw]
    # 1's first version moved into content_versions with its document; 2's is still its row.
    assert await counts(db, portal) == (2, 1)


async def test_archivals_deletions_and_returns_are_events_of_the_same_history(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    runs = [await fetch(factory, worker_db, portal, [record("1")])]
    runs.append(await fetch(factory, worker_db, portal, [record("1", archived=True)]))
    runs.append(await fetch(factory, worker_db, portal, [record("1")]))
    runs.append(await fetch(factory, worker_db, portal, [], gone=("1",)))
    runs.append(await fetch(factory, worker_db, portal, [record("1")]))

    events = [ContentEvent(e) for e in ("created", "archived", "unarchived", "deleted", "restored")]
    assert await history(db, portal, "1") == [
        (n + 1, event, runs[n], runs[n + 1] if n < 4 else None) for n, event in enumerate(events)
    ]
    archived, live = record("1", archived=True).raw, record("1").raw
    assert await documents(db, portal, "1") == [live, archived, live, live, live]
    # Two documents were ever stored; history holds each of them once, beside content_items'.
    assert await counts(db, portal) == (5, 2)


async def test_a_document_seen_again_is_not_stored_again(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    a, b = record("1"), record("1", name="B")
    for item in (a, b, a, b, a):
        await fetch(factory, worker_db, portal, [item])

    assert [v[1] for v in await history(db, portal, "1")] == [CREATED] + [UPDATED] * 4
    assert await documents(db, portal, "1") == [a.raw, b.raw, a.raw, b.raw, a.raw]
    assert await counts(db, portal) == (5, 2)


async def test_the_run_is_the_one_whose_fetch_of_the_type_is_in_flight(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    other_type = await factory.run(portal, status=RunStatus.RUNNING)
    await factory.job(other_type, content_type=ContentType.SITE_PAGE, status=JobStatus.RUNNING)
    run = await factory.run(portal)
    async with worker_db.for_job(await factory.lease(portal)) as scoped:
        await content_upsert_page(scoped, portal, TYPE, run.id, [record("1")])

    # No fetch of blog posts is in flight: written by hand, as far as history knows.
    assert await history(db, portal, "1") == [(1, CREATED, None, None)]
    fetched = await fetch(factory, worker_db, portal, [record("1", name="Fetched")])
    assert await history(db, portal, "1") == [
        (1, CREATED, None, fetched),
        (2, UPDATED, fetched, None),
    ]


async def test_a_removed_row_keeps_its_history_and_the_portal_takes_it_along(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await fetch(factory, worker_db, portal, [record("1"), record("2")])
    await query(
        db.pool, "versions_remove_item", portal_id=portal, content_type=str(TYPE), hubspot_id="1"
    )
    assert await history(db, portal, "1") == [(1, CREATED, first, None), (2, DELETED, None, None)]
    assert await documents(db, portal, "1") == [record("1").raw] * 2

    back = await fetch(factory, worker_db, portal, [record("1"), record("2")])
    assert (await history(db, portal, "1"))[-1] == (3, ContentEvent.RESTORED, back, None)

    await query(db.pool, "versions_delete_portal", portal_id=portal)
    assert await counts(db, portal) == (0, 0)


async def test_history_lost_behind_the_triggers_back_is_taken_up_again(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    await fetch(factory, worker_db, portal, [record("1")])
    await fetch(factory, worker_db, portal, [record("1", name="B")])
    await query(db.pool, "versions_forget", portal_id=portal, hubspot_id="1")

    run = await fetch(factory, worker_db, portal, [record("1", name="New")])

    # The stored row becomes a version of its own (with its document), numbered as the row
    # says, then the change.
    assert await history(db, portal, "1") == [(2, UPDATED, None, run), (3, UPDATED, run, None)]
    assert await documents(db, portal, "1") == [
        record("1", name="B").raw,
        record("1", name="New").raw,
    ]


async def test_history_is_under_the_row_level_security_of_content(
    factory: Factory, worker_db: Database, app_db: Database, db: Database
) -> None:
    owner = await factory.user()
    mine = await factory.portal(owner)
    theirs = await factory.portal()
    await fetch(factory, worker_db, mine, [record("1")])
    await fetch(factory, worker_db, theirs, [record("1")])

    # A worker reads no history at all, not even of the portal it holds a lease of.
    with pytest.raises(DatabaseRefused, match="content_history"):
        async with worker_db.for_job(await factory.lease(theirs)) as scoped:
            await versions_of_object(scoped, theirs, TYPE, "1")
    async with app_db.as_user(owner) as scoped:
        assert len(await versions_of_object(scoped, mine, TYPE, "1")) == 1
        assert await versions_of_object(scoped, theirs, TYPE, "1") == []
        assert (await changes_page(scoped, theirs, limit=10)).items == ()
    # Only the triggers write history: not even a worker of the portal may.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await query(worker_db.pool, "versions_insert_as_worker", portal_id=mine)


async def test_changes_are_windowed_by_run_time_and_type_and_page_without_gaps(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await fetch(factory, worker_db, portal, [record(str(n)) for n in range(1, 6)])
    midway = await db_now(db)
    second = await fetch(
        factory,
        worker_db,
        portal,
        [record("1", name="X"), record("2", archived=True), record("3"), record("6")],
        gone=("4", "5"),
    )
    await factory.content_item(await factory.run(portal), "p1", content_type=ContentType.SITE_PAGE)

    def keyed(page: Any) -> list[tuple[Any, ...]]:
        return [(c.run_id, c.content_type, c.hubspot_id, c.event) for c in page.items]

    everything = await changes_page(db, portal, limit=100)
    assert len(everything.items) == 5 + 5 + 1 and everything.last_key is None
    since_second = keyed(await changes_page(db, portal, ChangeFilter(since_run=second), limit=100))
    assert sorted(since_second) == sorted(
        [
            (second, TYPE, "1", UPDATED),
            (second, TYPE, "2", ContentEvent.ARCHIVED),
            (second, TYPE, "6", CREATED),
            (second, TYPE, "4", DELETED),
            (second, TYPE, "5", DELETED),
        ]
    )
    assert keyed(await changes_page(db, portal, ChangeFilter(since_run=first), limit=100)) == keyed(
        await changes_page(db, portal, ChangeFilter(since_run=first, content_type=TYPE), limit=100)
    )
    by_time = await changes_page(db, portal, ChangeFilter(since=midway), limit=100)
    assert [c.hubspot_id for c in by_time.items][-1] == "p1"
    assert len(by_time.items) == 6
    assert (
        await changes_page(db, portal, ChangeFilter(content_type=ContentType.SITE_PAGE), limit=9)
    ).items[0].name == "A page"

    walked: list[ContentChange] = []
    after = None
    while True:
        page = await changes_page(db, portal, after=after, limit=3)
        walked.extend(page.items)
        if page.last_key is None:
            break
        after = page.last_key
    assert walked == list(everything.items)
    assert [c.key for c in walked] == sorted(c.key for c in walked)


async def test_retention_prunes_old_superseded_versions_and_never_the_current_one(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    a, b = record("1"), record("1", name="B")
    for item in (a, b, a):  # 1 holds a, 2 holds b, 3 (a) is current
        await fetch(factory, worker_db, portal, [item, record("2")])
    await fetch(factory, worker_db, portal, [b, record("2")])  # 4 (b) current, a leaves
    await query(db.pool, "versions_age", portal_id=portal, hubspot_id=None, by="100 days")
    await fetch(factory, worker_db, portal, [a, record("2", name="C")])  # recent: 5, and 2's 2
    now = await db_now(db)

    dry = await versions_prune(db, timedelta(days=90), dry_run=True, batch_size=2, now=now)
    assert (dry.deleted, dry.documents_moved) == (3, 2)
    assert await counts(db, portal) == (7, 3)

    done = await versions_prune(db, timedelta(days=90), batch_size=2, now=now)

    # Superseded 100 days ago: versions 1 to 3 of object 1. Version 4 (b) was superseded
    # just now, and 2's first version too: kept.
    assert (done.deleted, done.documents_moved, done.scanned) == (3, 2, 5)
    assert [v[0] for v in await history(db, portal, "1")] == [4, 5]
    assert [v[0] for v in await history(db, portal, "2")] == [1, 2]
    # Version 1 held a's document and version 2 b's: each moved onto the oldest kept version
    # with the same hash, 5 (a, current) and 4 (b).
    assert await documents(db, portal, "1") == [b.raw, a.raw]
    assert await documents(db, portal, "2") == [record("2").raw, record("2", name="C").raw]
    assert await counts(db, portal) == (4, 3)
    assert (await versions_prune(db, timedelta(days=90), now=now)).deleted == 0


async def test_retention_removes_objects_deleted_before_it_with_all_their_versions(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    objects = [record("old"), record("recent"), record("live")]
    await fetch(factory, worker_db, portal, objects)
    await fetch(factory, worker_db, portal, [record("old", name="B"), *objects[1:]])
    await fetch(factory, worker_db, portal, [objects[2]], gone=("old", "recent"))
    # "old" went from HubSpot 100 days ago, "recent" just now; "live" is still there.
    await query(db.pool, "versions_age_deletion", portal_id=portal, hubspot_id="old", by="100 days")
    await query(db.pool, "versions_age", portal_id=portal, hubspot_id="old", by="100 days")
    now = await db_now(db)

    dry = await versions_prune(db, timedelta(days=90), dry_run=True, now=now)
    assert (dry.objects, dry.object_versions) == (1, 3)
    assert len(await query(db, "versions_objects", portal_id=portal)) == 3

    done = await versions_prune(db, timedelta(days=90), now=now)

    # Each version counted once: "old"'s superseded ones go with it, not as old history.
    assert (done.objects, done.object_versions, done.deleted) == (1, 3, 0)
    assert (dry.deleted, dry.documents_moved) == (done.deleted, done.documents_moved) == (0, 0)
    left = await query(db, "versions_objects", portal_id=portal)
    assert [(r["hubspot_id"], r["deleted"]) for r in left] == [("live", False), ("recent", True)]
    assert await history(db, portal, "old") == []
    assert [v[1] for v in await history(db, portal, "recent")] == [CREATED, DELETED]
    assert [v[1] for v in await history(db, portal, "live")] == [CREATED]
    assert (await versions_prune(db, timedelta(days=90), now=now)).objects == 0


async def test_a_worker_cannot_write_where_a_version_stands(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    lease = await factory.lease(portal)
    other = await factory.run(portal)
    held = (lease.id, lease.lease_token)

    await query_as(
        worker_db.pool,
        "versions_forge_insert",
        as_portal=portal,
        lease=held,
        portal_id=portal,
        run_id=other.id,
    )

    # Numbered and dated by the history, not by the INSERT: no fetch of the type is in flight.
    assert await history(db, portal, "forged") == [(1, CREATED, None, None)]
    for name in ("versions_forge_number", "versions_forge_key"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await query_as(worker_db.pool, name, as_portal=portal, lease=held, portal_id=portal)
