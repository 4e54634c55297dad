"""content_items: upsert a fetched page, the ids a fetch saw and the deletion sweep over them,
the last confirmation of a portal's type, stream rows, and the API's pages of live content
(content.sql).

    async with db.for_portal(portal_id) as scoped:          # one transaction per page
        await content_upsert_page(scoped, portal_id, content_type, run_id, page.items,
                                  seen_by=job_id)           # + the ids, for the sweep
        ...                                                 # + the job's fenced checkpoint
    ids = await content_unseen(scoped, portal_id, content_type, job_id, after="", limit=100)
    await content_mark_deleted(scoped, portal_id, content_type, run_id, confirmed_gone)
    await content_sync_confirm(scoped, portal_id, content_type, run_id, job_id, seen, deleted)
    async for row in content_rows(scoped, portal_id, content_type, with_data=False): ...

`content_upsert_page` writes a whole page in one statement: one array per column, sent in
binary; each object's JSON text and its hash are made here, so that Postgres parses only the
documents that changed, and writes only the rows in which something a user can see changed
(a re-sync of an unchanged portal writes no content row). It takes any objects shaped like
the HubSpot client's `ContentRecord` (this package does not import the client). What a
fetch job saw is kept per job in `fetch_seen` (0006_sync_runs.sql), not stamped on every
row; when it was last confirmed is one row per portal and type (`content_syncs`).
`content_rows` reads through a server-side cursor, a batch at a time, so an export never
holds the table in memory; it must run inside a transaction (`for_portal` or
`transaction`). `content_page` runs as the API's caller (`Database.as_user`).
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
        "documents": [document.decode() for document in documents],
        # The same object sent again encodes to the same bytes, so an unchanged hash means
        # an unchanged document (a reordering by HubSpot only costs one rewrite).
        "content_hashes": [hashlib.sha256(document).hexdigest() for document in documents],
    }


@dataclass(frozen=True, slots=True)
class ContentSync:
    """The last completed fetch of a portal's type: when its objects were last confirmed."""

    portal_id: int
    content_type: ContentType
    run_id: int
    job_id: int
    confirmed_at: datetime
    seen: int
    deleted: int


async def content_upsert_page(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    items: Sequence[ContentRow],
    *,
    seen_by: int | None = None,
) -> int:
    """Store one page of objects fetched by `run_id`, writing only the rows that changed;
    returns the rows written. With `seen_by`, the page's ids are recorded as seen by that
    fetch job (in the same transaction), for its deletion sweep."""
    if not items:
        return 0
    columns = _page_columns(items)
    params = {"portal_id": portal_id, "content_type": str(content_type), "run_id": run_id}
    written = await db.execute("content_upsert_page", {**params, **columns})
    if seen_by is not None:
        await content_seen_add(db, seen_by, portal_id, columns["hubspot_ids"])
    return written


async def content_seen_add(
    db: Database, job_id: int, portal_id: int, hubspot_ids: Sequence[str]
) -> None:
    """Record `hubspot_ids` as seen by fetch job `job_id`."""
    if hubspot_ids:
        params = {"job_id": job_id, "portal_id": portal_id, "hubspot_ids": list(hubspot_ids)}
        await db.execute("content_seen_add", params)


async def content_seen_start(db: Database, job_id: int, portal_id: int) -> None:
    """A listing of job `job_id` starts from the beginning: forget what it saw, set its marker."""
    await db.execute("content_seen_forget", {"job_id": job_id})
    await db.execute("content_seen_mark", {"job_id": job_id, "portal_id": portal_id})


async def content_seen_intact(db: Database, job_id: int) -> bool:
    """Whether what job `job_id` has seen is all still recorded (its marker is there)."""
    return bool(await db.one("content_seen_intact", {"job_id": job_id}, row=scalar_row))


async def content_seen_count(db: Database, job_id: int) -> int:
    """How many distinct objects job `job_id` has seen."""
    return int(await db.one("content_seen_count", {"job_id": job_id}, row=scalar_row) or 0)


async def content_unseen(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    job_id: int,
    *,
    after: str = "",
    limit: int,
) -> list[str]:
    """Up to `limit` ids, in order after `after`, of the type's objects stored as present
    (live or archived) that job `job_id` has not seen: the deletion sweep's candidates."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "job_id": job_id,
        "after": after,
        "limit": limit,
    }
    return [
        str(hubspot_id) for hubspot_id in await db.all("content_unseen", params, row=scalar_row)
    ]


async def content_mark_deleted(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    hubspot_ids: Sequence[str],
) -> int:
    """Mark deleted the objects HubSpot confirmed gone (by run `run_id`); how many changed."""
    if not hubspot_ids:
        return 0
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "run_id": run_id,
        "hubspot_ids": list(hubspot_ids),
    }
    return await db.execute("content_mark_deleted", params)


async def content_sync_confirm(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    *,
    run_id: int,
    job_id: int,
    seen: int,
    deleted: int,
) -> None:
    """Record the completed fetch `job_id` as the type's last confirmation (content_syncs)."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "run_id": run_id,
        "job_id": job_id,
        "seen": seen,
        "deleted": deleted,
    }
    await db.execute("content_sync_confirm", params)


async def content_sync_get(
    db: Database, portal_id: int, content_type: ContentType
) -> ContentSync | None:
    """The last completed fetch of the portal's type, if there is one."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    return await db.one("content_sync_get", params, row=model_row(ContentSync))


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
