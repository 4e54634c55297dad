"""content_items: upsert a fetched page, mark what a complete fetch did not see, stream rows,
and the API's pages of live content (content.sql).

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
run inside a transaction (`for_portal` or `transaction`). `content_page` and
`content_language_groups` run as the API's caller (`Database.as_user`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import orjson
from psycopg.rows import dict_row, scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
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


@dataclass(frozen=True, slots=True)
class ContentItem:
    """One live HubSpot object of a portal, as the API shows it."""

    content_type: ContentType
    hubspot_id: str
    name: str | None
    slug: str | None
    url: str | None
    state: str | None
    language: str | None
    # The primary object of its language group; None for a primary.
    translated_from_id: str | None
    hubspot_updated_at: datetime | None
    archived: bool
    synced_at: datetime
    data: Any


@dataclass(frozen=True, slots=True)
class ContentPage:
    """One keyset page of content; `last_key` is set when another page follows."""

    items: tuple[ContentItem, ...]
    last_key: tuple[ContentType, str] | None


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
    return await db.execute(
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
    return await db.execute(
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
    params = {"portal_id": portal_id, "content_type": str(content_type), "with_data": with_data}
    rows = db.stream("content_export_rows", params, row=dict_row, batch_size=batch_size)
    async for row in rows:
        yield row


async def content_count(db: Database, portal_id: int, content_type: ContentType) -> int:
    """How many rows (deleted ones included) the portal has of `content_type`."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    return int(await db.one("content_count", params, row=scalar_row) or 0)


async def content_page(
    db: Database,
    portal_id: int,
    *,
    content_type: ContentType | None = None,
    pattern: str | None = None,
    after: tuple[ContentType, str] | None = None,
    limit: int,
) -> ContentPage:
    """Up to `limit` live objects after the key `after`, optionally of one type and matching
    the ILIKE `pattern` in name, slug or url."""
    params = {"portal_id": portal_id, "pattern": pattern, "limit": limit}
    where = {
        "content_type": str(content_type) if content_type else None,
        "after_type": str(after[0]) if after else None,
        "after_id": after[1] if after else None,
    }
    rows = await db.all("content_page", {**params, **where}, row=model_row(ContentItem))
    items = tuple(rows[:limit])
    more = len(rows) > limit
    last_key = (items[-1].content_type, items[-1].hubspot_id) if more and items else None
    return ContentPage(items=items, last_key=last_key)


@dataclass(frozen=True, slots=True)
class _GroupMember:
    """A row of `content_language_groups`: the key asked for, and one member of its group."""

    asked_type: ContentType
    asked_id: str
    item: ContentItem


async def content_language_groups(
    db: Database,
    portal_id: int,
    keys: Sequence[tuple[ContentType, str]],
    *,
    with_data: bool,
) -> dict[tuple[ContentType, str], tuple[ContentItem, ...]]:
    """The live members of the language group of each live object of `keys`, the object
    itself included, primary first; `data` only of the asked objects, and only `with_data`.
    A key of an object that is not live (or not visible) is left out."""
    params = {
        "portal_id": portal_id,
        "content_types": [str(key[0]) for key in keys],
        "hubspot_ids": [key[1] for key in keys],
        "with_data": with_data,
    }
    rows = await db.all("content_language_groups", params, row=model_row(_GroupMember))
    groups: dict[tuple[ContentType, str], list[ContentItem]] = {}
    for row in rows:
        groups.setdefault((row.asked_type, row.asked_id), []).append(row.item)
    return {key: tuple(members) for key, members in groups.items()}
