"""content_upsert_page against Postgres: what a stored page holds, and what a second run keeps."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from smuves_sync.content_fields import ContentRecord, RejectedObject
from smuves_sync.content_text import escape_value, unescape_text, unescape_value
from smuves_sync.db import Database, content
from smuves_sync.db.content import content_page_columns, content_upsert_page
from smuves_sync.db.fetch_seen import fetch_seen_mark_deleted
from smuves_sync.db.rejects import run_rejects
from smuves_sync.errors import DatabaseError, DatabaseRefused
from smuves_sync.models import ContentType, Run
from tests.support import query
from tests.support.factories import Factory

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


async def store(db: Database, factory: Factory, run: Run, items: list[ContentRecord]) -> int:
    """Store a page as a worker under a lease of the run's portal."""
    async with db.for_job(await factory.lease(run.portal_id)) as scoped:
        return await content_upsert_page(scoped, run.portal_id, TYPE, run.id, items)


async def rows(db: Database, portal_id: int) -> dict[str, dict[str, Any]]:
    found = await query(db, "content_rows_of_type", portal_id=portal_id, content_type=TYPE)
    return {row["hubspot_id"]: row for row in found}


async def test_a_page_is_stored_with_its_promoted_fields_and_documents(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    items = [record("1"), record("2", archived=True, big=2**70), record("3", name=None)]

    assert await store(worker_db, factory, run, items) == 3

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
    assert await store(worker_db, factory, run, []) == 0


async def test_a_second_run_writes_only_the_changed_objects(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    await store(worker_db, factory, first, [record("1"), record("2"), record("3")])
    before = await rows(db, first.portal_id)
    # A stored document that differs from what its hash says: kept as long as the incoming
    # object hashes the same, which shows that an unchanged object is not written again.
    await query(
        db,
        "content_replace_data",
        portal_id=first.portal_id,
        hubspot_id="1",
        data=Jsonb({"kept": True}),
    )
    planted = await rows(db, first.portal_id)

    page = [record("1"), record("2", name="Renamed"), record("3")]
    assert await store(worker_db, factory, second, page) == 1

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
    factory: Factory, worker_db: Database, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    await store(worker_db, factory, first, [record("1")])
    # jsonb refuses \u0000, so this object can only be stored if it is never parsed. (The
    # store escapes a NUL now: the document is written here as it would be without that.)
    monkeypatch.setattr(content, "_document", lambda raw: json.dumps(raw).encode())
    refused = record("1", note="nul \x00 inside")
    with pytest.raises(DatabaseError, match="unsupported Unicode escape"):
        await store(worker_db, factory, first, [refused])
    await query(
        db,
        "content_set_hash",
        portal_id=first.portal_id,
        hubspot_id="1",
        content_hash=content_page_columns([refused])[0]["content_hashes"][0],
    )

    before = (await rows(db, first.portal_id))["1"]

    assert await store(worker_db, factory, second, [refused]) == 0

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
    await store(worker_db, factory, first, [record("1"), record("2")])
    await store(worker_db, factory, second, [record("1")])
    async with worker_db.for_job(await factory.lease(first.portal_id)) as scoped:
        assert await fetch_seen_mark_deleted(scoped, first.portal_id, TYPE, second.id, ["2"]) == 1
    assert (await rows(db, first.portal_id))["2"]["deleted_at"] is not None

    # The same document, now listed by the archived pass.
    await store(worker_db, factory, third, [dataclasses.replace(record("2"), archived=True)])

    row = (await rows(db, first.portal_id))["2"]
    assert (row["deleted_at"], row["archived"], row["changed_run"]) == (None, True, third.id)


async def test_the_language_group_is_stored_and_follows_hubspot(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    first = await factory.run()
    second = await factory.run(first.portal_id)
    translation = dataclasses.replace(record("2"), language="en", translated_from_id="1")
    await store(worker_db, factory, first, [record("1"), translation])

    stored = await rows(db, first.portal_id)
    assert (stored["1"]["translated_from_id"], stored["2"]["translated_from_id"]) == (None, "1")
    assert stored["2"]["language"] == "en"

    # Detached from its group in HubSpot: the column follows, though the document is the same.
    detached = dataclasses.replace(translation, translated_from_id=None)
    await store(worker_db, factory, second, [record("1"), detached])
    assert (await rows(db, first.portal_id))["2"]["translated_from_id"] is None


async def test_a_worker_scoped_to_another_portal_cannot_store_this_portals_objects(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    other = await factory.portal()
    await store(worker_db, factory, run, [record("1")])

    with pytest.raises(DatabaseRefused):
        async with worker_db.for_job(await factory.lease(other)) as scoped:
            await content_upsert_page(scoped, run.portal_id, TYPE, run.id, [record("1")])
    assert (await rows(db, run.portal_id))["1"]["changed_run"] == run.id


async def test_nul_and_lone_surrogates_are_stored_by_the_escaping_rule(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    nul_body = record("1", widgets={"body": {"html": "<p>a\x00b</p>"}})
    nul_key = record("2", **{"odd\x00key": "x"})
    nul_name = dataclasses.replace(record("3"), name="Na\x00me", slug="s\x00")
    lone = record("4", note="half \ud83d of a pair", mark="\ufdd0 stays itself")
    lone = dataclasses.replace(lone, name="\udfffname")
    items = [nul_body, nul_key, nul_name, lone]

    assert await store(worker_db, factory, run, items) == 4

    stored = await rows(db, run.portal_id)
    assert stored["1"]["data"]["widgets"]["body"]["html"] == "<p>a\ufdd00000b</p>"
    assert "odd\ufdd00000key" in stored["2"]["data"]
    assert (stored["3"]["name"], stored["3"]["slug"]) == ("Na\ufdd00000me", "s\ufdd00000")
    assert stored["4"]["data"]["note"] == "half \ufdd0D83D of a pair"
    assert stored["4"]["data"]["mark"] == "\ufdd0FDD0 stays itself"
    assert stored["4"]["name"] == "\ufdd0DFFFname"
    for item in items:
        assert unescape_value(stored[item.hubspot_id]["data"]) == item.raw
        assert stored[item.hubspot_id]["data"] == escape_value(item.raw)
        assert unescape_text(stored[item.hubspot_id]["name"]) == item.name
    # The same objects again hash the same: unchanged documents are kept, not rewritten.
    second = await factory.run(run.portal_id)
    await store(worker_db, factory, second, items)
    again = await rows(db, run.portal_id)
    assert {k: r["content_hash"] for k, r in again.items()} == {
        k: r["content_hash"] for k, r in stored.items()
    }


async def test_an_object_listed_twice_in_a_page_is_stored_once_as_its_last_copy(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    # "4" and 4 are one id: the client reads both as the text "4".
    page = [record("4"), record("5"), record("4", name="Second copy", id=4)]

    assert await store(worker_db, factory, run, page) == 2

    stored = await rows(db, run.portal_id)
    assert sorted(stored) == ["4", "5"]
    assert stored["4"]["name"] == "Second copy"
    assert stored["4"]["data"]["id"] == 4
    assert await query(db, "sync_rejects_of_portal", portal_id=run.portal_id) == []


async def test_what_cannot_be_stored_is_recorded_in_content_rejects_and_the_page_goes_on(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    run = await factory.run()
    long_id = record("9" * 1100)
    not_json = record("2", odd={1, 2})  # a value no JSON document can hold
    unread = RejectedObject.of({"name": "no id"}, "object has no usable 'id' (got NoneType)")
    page = [long_id, record("3"), not_json]

    async with worker_db.for_job(await factory.lease(run.portal_id)) as scoped:
        written = await content_upsert_page(
            scoped, run.portal_id, TYPE, run.id, page, rejected=[unread]
        )
        # The page read again by the same run (a second pass, a requeue from the start) adds
        # no second row, for an object with an id or without a usable one.
        await content_upsert_page(scoped, run.portal_id, TYPE, run.id, page)

    assert written == 1
    assert sorted(await rows(db, run.portal_id)) == ["3"]
    found = await query(db, "sync_rejects_of_portal", portal_id=run.portal_id)
    assert [(r["run_id"], r["content_type"], r["hubspot_id"]) for r in found] == [
        (run.id, "blog_post", None),
        (run.id, "blog_post", None),
        (run.id, "blog_post", "2"),
    ]
    assert found[0]["reason"] == "object has no usable 'id' (got NoneType)"
    assert "id cannot be stored: it is 1,100 bytes long" in found[1]["reason"]
    assert "cannot store a value of type set" in found[2]["reason"]
    assert json.loads(found[1]["raw"])["id"] == "9" * 1100
    assert json.loads(found[2]["raw"])["odd"] == "{1, 2}"
    # Read as `smuves sync` reads them after its run: as the operator.
    rejects = await run_rejects(db, run.id)
    assert rejects.objects == 3
    assert rejects.note is not None
    assert rejects.note.startswith("3 objects could not be stored: blog_post 3 (")
    assert "and 2 other reasons" in rejects.note
