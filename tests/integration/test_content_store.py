"""content_upsert_page against Postgres: what a stored page holds, and what a second run keeps."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from smuves_sync.db import Database
from smuves_sync.db.content import (
    _page_columns,
    content_mark_deleted,
    content_upsert_page,
)
from smuves_sync.hubspot.registry import ContentRecord
from smuves_sync.models import ContentType, Run
from tests.factories import Factory
from tests.integration.queue_helpers import read
from tests.integration.sync_helpers import write

TYPE = ContentType.BLOG_POST


def record(hubspot_id: str, **changes: Any) -> ContentRecord:
    """A blog post as the client reads it; `changes` go into the raw object too."""
    raw: dict[str, Any] = {
        "id": hubspot_id,
        "name": f"Post {hubspot_id}",
        "slug": f"post-{hubspot_id}",
        "widgets": {"body": {"html": '<p>Grüße, "quoted" \\ and \u2028</p>', "n": [1, 2.5]}},
        **changes,
    }
    return ContentRecord(
        content_type=str(TYPE),
        hubspot_id=hubspot_id,
        name=raw["name"],
        slug=raw["slug"],
        url=None,
        state="PUBLISHED",
        language=None,
        updated_at=datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        archived=bool(raw.get("archived", False)),
        raw=raw,
    )


async def store(db: Database, run: Run, items: list[ContentRecord]) -> int:
    async with db.for_portal(run.portal_id) as scoped:
        return await content_upsert_page(scoped, run.portal_id, TYPE, run.id, items)


async def rows(db: Database, portal_id: int) -> dict[str, dict[str, Any]]:
    found = await read(db.pool, "content_rows_of_type", portal_id=portal_id, content_type=TYPE)
    return {row["hubspot_id"]: row for row in found}


async def test_a_page_is_stored_with_its_promoted_fields_and_documents(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    items = [record("1"), record("2", archived=True, big=2**70), record("3", name=None)]

    assert await store(worker_db, run, items) == 3

    stored = await rows(db, run.portal_id)
    assert sorted(stored) == ["1", "2", "3"]
    for item in items:
        row = stored[item.hubspot_id]
        assert row["data"] == item.raw  # 2**70 survives: no 64-bit limit on the way in
        assert (row["name"], row["slug"], row["state"], row["language"]) == (
            item.name,
            item.slug,
            "PUBLISHED",
            None,
        )
        assert row["hubspot_updated_at"] == item.updated_at
        assert row["archived"] is item.archived
        assert (row["first_seen_run"], row["changed_run"]) == (run.id, run.id)
        assert row["deleted_at"] is None and row["content_hash"]
    assert len({row["content_hash"] for row in stored.values()}) == 3
    assert await store(worker_db, run, []) == 0


async def test_a_second_run_writes_only_the_changed_objects(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    await store(worker_db, first, [record("1"), record("2"), record("3")])
    before = await rows(db, first.portal_id)
    # A stored document that differs from what its hash says: kept as long as the incoming
    # object hashes the same, which shows that an unchanged object is not written again.
    await write(
        db.pool,
        "content_replace_data",
        portal_id=first.portal_id,
        hubspot_id="1",
        data=Jsonb({"kept": True}),
    )
    planted = await rows(db, first.portal_id)

    page = [record("1"), record("2", name="Renamed"), record("3")]
    assert await store(worker_db, second, page) == 1

    after = await rows(db, first.portal_id)
    assert after["1"]["data"] == {"kept": True}
    assert after["1"]["content_hash"] == before["1"]["content_hash"]
    assert after["2"]["data"] == record("2", name="Renamed").raw
    assert after["2"]["name"] == "Renamed"
    assert after["2"]["content_hash"] != before["2"]["content_hash"]
    assert after["3"]["content_hash"] == before["3"]["content_hash"]
    # Rows are not stamped with every run that saw them (content_syncs says when a type was
    # last confirmed): only the changed one moved.
    assert {h: (r["first_seen_run"], r["changed_run"]) for h, r in after.items()} == {
        "1": (first.id, first.id),
        "2": (first.id, second.id),
        "3": (first.id, first.id),
    }
    assert [h for h in after if after[h]["xmin"] != planted[h]["xmin"]] == ["2"]


async def test_an_unchanged_object_is_not_parsed_again(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    await store(worker_db, first, [record("1")])
    # jsonb refuses \u0000, so this object can only be stored if it is never parsed.
    refused = record("1", note="nul \x00 inside")
    with pytest.raises(psycopg.errors.UntranslatableCharacter):
        await store(worker_db, first, [refused])
    await write(
        db.pool,
        "content_set_hash",
        portal_id=first.portal_id,
        hubspot_id="1",
        content_hash=_page_columns([refused])["content_hashes"][0],
    )

    before = (await rows(db, first.portal_id))["1"]

    assert await store(worker_db, second, [refused]) == 0

    row = (await rows(db, first.portal_id))["1"]
    assert (row["data"], row["changed_run"], row["xmin"]) == (
        record("1").raw,
        first.id,
        before["xmin"],
    )


async def test_an_object_deleted_and_seen_again_is_live_again_with_its_new_flags(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    third = await factory.run(first.portal_id)
    await store(worker_db, first, [record("1"), record("2")])
    await store(worker_db, second, [record("1")])
    async with worker_db.for_portal(first.portal_id) as scoped:
        assert await content_mark_deleted(scoped, first.portal_id, TYPE, second.id, ["2"]) == 1
    assert (await rows(db, first.portal_id))["2"]["deleted_at"] is not None

    # The same document, now listed by the archived pass.
    await store(worker_db, third, [dataclasses.replace(record("2"), archived=True)])

    row = (await rows(db, first.portal_id))["2"]
    assert (row["deleted_at"], row["archived"], row["changed_run"]) == (None, True, third.id)


async def test_a_worker_scoped_to_another_portal_cannot_store_this_portals_objects(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    other = await factory.portal()
    await store(worker_db, run, [record("1")])

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        async with worker_db.for_portal(other) as scoped:
            await content_upsert_page(scoped, run.portal_id, TYPE, run.id, [record("1")])
    assert (await rows(db, run.portal_id))["1"]["changed_run"] == run.id
