"""content_items: upsert a fetched page, mark what a complete fetch did not see, stream rows.

    async with db.for_portal(portal_id) as scoped:          # one transaction per page
        await content_upsert_page(scoped, portal_id, content_type, run_id, page.items)
        ...                                                 # + the job's fenced checkpoint
    await content_mark_unseen_deleted(scoped, portal_id, content_type, run_id)
    async for row in content_rows(scoped, portal_id, content_type, with_data=False): ...

`content_upsert_page` writes a whole page in one statement: one array per column, sent in
binary; each object's JSON text and its hash are made here, so that Postgres parses only the
documents that changed. It takes any objects shaped like the HubSpot client's
`ContentRecord` (this package does not import the client). `content_rows` reads through a
server-side cursor, a batch at a time, so an export never holds the table in memory; it must
run inside a transaction (`for_portal` or `transaction`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import orjson
from psycopg.rows import dict_row

from smuves_sync.db.database import Database
from smuves_sync.db.queries import queries
from smuves_sync.models import ContentType


class ContentRow(Protocol):
    """One fetched object: its promoted fields and the object as HubSpot sent it."""

    @property
    def hubspot_id(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def slug(self) -> str | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def state(self) -> str | None: ...
    @property
    def language(self) -> str | None: ...
    @property
    def updated_at(self) -> datetime | None: ...
    @property
    def archived(self) -> bool: ...
    @property
    def raw(self) -> Mapping[str, Any]: ...
    @property
    def translated_from_id(self) -> str | None: ...


def _json_default(value: object) -> object:
    if isinstance(value, Mapping):  # a read-only mapping from the client
        return dict(value)
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


def _document(raw: Mapping[str, Any]) -> bytes:
    """The object as compact JSON, keys in the order HubSpot sent them."""
    try:
        return orjson.dumps(raw, default=_json_default)
    except orjson.JSONEncodeError:
        # orjson refuses what the standard library accepts, e.g. integers beyond 64 bits.
        return json.dumps(
            raw, default=_json_default, ensure_ascii=False, separators=(",", ":")
        ).encode()


def _page_columns(items: Sequence[ContentRow]) -> dict[str, list[Any]]:
    """The page as one list per column, the shape `content_upsert_page` unnests."""
    documents = [_document(item.raw) for item in items]
    return {
        "hubspot_ids": [item.hubspot_id for item in items],
        "names": [item.name for item in items],
        "slugs": [item.slug for item in items],
        "urls": [item.url for item in items],
        "states": [item.state for item in items],
        "languages": [item.language for item in items],
        "updated_ats": [item.updated_at for item in items],
        "archived": [item.archived for item in items],
        "translated_from_ids": [item.translated_from_id for item in items],
        "documents": [document.decode() for document in documents],
        # The same object sent again encodes to the same bytes, so an unchanged hash means
        # an unchanged document (a reordering by HubSpot only costs one rewrite).
        "content_hashes": [hashlib.sha256(document).hexdigest() for document in documents],
    }


async def content_upsert_page(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    items: Sequence[ContentRow],
) -> int:
    """Insert or update one page of objects seen by `run_id`; returns the rows written."""
    if not items:
        return 0
    # Same package as Database: its row helpers are ours to use.
    return await db._execute(
        "content_upsert_page",
        {
            "portal_id": portal_id,
            "content_type": str(content_type),
            "run_id": run_id,
            **_page_columns(items),
        },
    )


async def content_mark_unseen_deleted(
    db: Database, portal_id: int, content_type: ContentType, run_id: int
) -> int:
    """Mark deleted the live objects of the type that run `run_id` did not see; how many."""
    return await db._execute(
        "content_mark_unseen_deleted",
        {"portal_id": portal_id, "content_type": str(content_type), "run_id": run_id},
    )


async def content_rows(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    *,
    with_data: bool,
    batch_size: int = 2000,
) -> AsyncIterator[dict[str, Any]]:
    """The type's rows in hubspot_id order, fetched `batch_size` at a time from the server."""
    if db._conn is None:
        raise RuntimeError("content_rows needs a transaction: use db.for_portal(...)")
    params = {"portal_id": portal_id, "content_type": str(content_type), "with_data": with_data}
    async with db._conn.cursor("smuves_content_rows", row_factory=dict_row) as cur:
        cur.itersize = batch_size
        await cur.execute(queries()["content_export_rows"], params)
        async for row in cur:
            yield row


async def content_count(db: Database, portal_id: int, content_type: ContentType) -> int:
    """How many rows (deleted ones included) the portal has of `content_type`."""
    row = await db._one(
        "content_count", {"portal_id": portal_id, "content_type": str(content_type)}
    )
    return int(row["n"]) if row else 0
