"""content_items: upsert a fetched page, stream rows, and the API's pages of live content
(content.sql). What a fetch saw, the deletion sweep and a type's last confirmation are
`fetch_seen`'s.

    async with db.for_job(job) as scoped:                   # one transaction per page
        await content_upsert_page(scoped, portal_id, content_type, run_id, page.items,
                                  seen_by=job_id)           # + the ids, for the sweep
        ...                                                 # + the job's fenced checkpoint
    async for row in content_rows(scoped, portal_id, content_type, with_data=False,
                                  include_deleted=False): ...

`content_upsert_page` writes a whole page in one statement: the documents as one array sent
in binary, the promoted columns as one JSON text (`content_page_columns`); each object's JSON
text and its hash are made here, so that Postgres parses only the documents that changed, and
writes only the rows in which something a user can see changed (a re-sync of an unchanged
portal writes no content row). A page of objects none of which is stored (a first sync's) is
inserted as it is, with nothing to compare (`content_insert_new_page`); a page that holds a
stored object is compared (`content_upsert_page`: the first statement wrote nothing of it),
and so is every later page of that job (`NewPages`).
It takes the records the HubSpot client reads (`content_fields.ContentRecord`). What a fetch
job saw is kept per job in `fetch_seen` (an unlogged table), not stamped on every row; when it
was last confirmed is one row per portal and type (`content_syncs`).
`content_rows` reads through a server-side cursor, a batch at a time, so an export never
holds the table in memory; it must run inside a transaction (`for_portal` or
`transaction`). `content_page` and `content_language_groups` run as the API's caller
(`Database.as_user`); `content_count_by_type` as the login role, for the dashboard::

    counts = await content_count_by_type(db, [portal_id])   # {(portal, type): ContentCounts}

Nothing HubSpot sends fails a page. Before the arrays are built, text Postgres cannot hold (NUL
characters, lone surrogates) is escaped by the one rule of `smuves_sync.content_text`, in the
documents and the promoted columns alike; an object listed twice in a page is stored once, as
its last copy; an object that still cannot be stored (an id Postgres cannot key on, a document
that cannot be written as JSON) is recorded in content_rejects instead (`db.rejects`), with
the objects the caller could not read (`rejected`). The readers hand back text as stored:
whoever shows it to a person decodes it (`content_text`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from psycopg.rows import dict_row, scalar_row

from smuves_sync.content_fields import ContentRecord, Promoted, RejectedObject, usable_id
from smuves_sync.content_text import ESCAPE_UTF8, escape_text, escape_value
from smuves_sync.db.database import Database
from smuves_sync.db.fetch_seen import fetch_seen_add, fetch_seen_key
from smuves_sync.db.rejects import content_rejects_add
from smuves_sync.db.rows import KeysetPage, model_row
from smuves_sync.models import ContentType


@dataclass(frozen=True, slots=True)
class ContentItem(Promoted):
    """One live HubSpot object of a portal, as the API shows it."""

    content_type: ContentType
    # The primary object of its language group; None for a primary.
    translated_from_id: str | None
    hubspot_updated_at: datetime | None
    archived: bool
    synced_at: datetime
    data: Any


@dataclass(frozen=True, slots=True)
class ContentCounts:
    """Stored objects of one portal and type."""

    live: int
    archived: int
    deleted: int


@dataclass(frozen=True, slots=True)
class ExportCounts:
    """An export's rows of one portal and type, and the type's objects marked deleted (left
    out of those rows unless the export includes them)."""

    rows: int
    deleted: int


@dataclass(frozen=True, slots=True)
class _TypeCounts:
    portal_id: int
    content_type: ContentType
    counts: ContentCounts


class _Unstorable(ValueError):
    """An object that cannot be stored even escaped; the message says why."""


def _json_default(value: object) -> object:
    if isinstance(value, Mapping):  # a read-only mapping from the client
        return dict(value)
    raise TypeError(f"cannot store a value of type {type(value).__name__}")


def _document(raw: Mapping[str, Any]) -> bytes:
    """The object as compact JSON, keys in the order HubSpot sent them, its text escaped where
    Postgres could not hold it (`content_text`); `_Unstorable` when it cannot be written."""
    try:
        document = orjson.dumps(raw, default=_json_default)
    except orjson.JSONEncodeError:
        pass  # lone surrogates, integers beyond 64 bits, deep nesting: written out below
    else:
        # orjson writes a NUL as this escape; the mark is there only in text to escape.
        if b"\\u0000" not in document and ESCAPE_UTF8 not in document:
            return document
    try:
        escaped = escape_value(raw)
    except RecursionError:
        raise _Unstorable("its document nests too deep to be stored") from None
    try:
        return orjson.dumps(escaped, default=_json_default)
    except orjson.JSONEncodeError:
        pass  # orjson refuses what the standard library accepts, e.g. integers beyond 64 bits
    try:
        return json.dumps(
            escaped,
            default=_json_default,
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
        ).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise _Unstorable(f"its document cannot be written as JSON: {exc}") from None


def _text(value: str | None) -> str | None:
    return None if value is None else escape_text(value)


@dataclass(frozen=True, slots=True)
class _Storable:
    """One object ready for the arrays: its promoted columns escaped, its document encoded."""

    item: ContentRecord
    hubspot_id: str
    document: bytes


def _prepare_page(
    items: Sequence[ContentRecord],
) -> tuple[list[_Storable], list[RejectedObject]]:
    """The page's objects as they will be stored (one per id, the last copy of each), and the
    ones that cannot be stored."""
    kept: dict[str, _Storable] = {}
    rejects: list[RejectedObject] = []
    for item in items:
        hubspot_id = str(item.hubspot_id)
        problem = usable_id(hubspot_id)
        try:
            if problem is not None:
                raise _Unstorable(f"its id cannot be stored: {problem}")
            document = _document(item.raw)
        except _Unstorable as exc:
            rejects.append(RejectedObject.of(item.raw, str(exc), hubspot_id))
            continue
        # A page that lists an object twice (ids are text, so "4" and 4 are one id): the last
        # copy wins, as it would have had the two come in two pages. One statement cannot
        # write a row twice.
        kept.pop(hubspot_id, None)
        kept[hubspot_id] = _Storable(item, hubspot_id, document)
    return list(kept.values()), rejects


def content_page_columns(
    items: Sequence[ContentRecord],
) -> tuple[dict[str, Any], list[RejectedObject]]:
    """The page as `content_upsert_page` sends it (its storable objects, one per id): the
    documents as one list (an array, in binary), each object's id, promoted columns and hash
    as one JSON text (`fields`: one parameter, not an array per column, whose elements the
    driver would encode one by one), and the objects that cannot be stored."""
    page, rejects = _prepare_page(items)
    # The same object sent again encodes to the same bytes, so an unchanged hash means an
    # unchanged document (a reordering by HubSpot only costs one rewrite).
    hashes = [hashlib.sha256(p.document).hexdigest() for p in page]
    fields = [
        {
            "i": p.hubspot_id,
            "n": _text(p.item.name),
            "s": _text(p.item.slug),
            "u": _text(p.item.url),
            "st": _text(p.item.state),
            "l": _text(p.item.language),
            "t": p.item.updated_at,
            "a": p.item.archived,
            "tr": _text(p.item.translated_from_id),
            "h": content_hash,
        }
        for p, content_hash in zip(page, hashes, strict=True)
    ]
    columns: dict[str, Any] = {
        "hubspot_ids": [p.hubspot_id for p in page],
        "fields": orjson.dumps(fields).decode(),
        "documents": [p.document.decode() for p in page],
        "content_hashes": hashes,
    }
    return columns, rejects


@dataclass(slots=True)
class NewPages:
    """A fetch job's guess that its next page holds new objects only (a first sync's pages):
    such a page is tried as a plain insert first (`content_insert_new_page`). The guess is
    dropped at the first page that holds a stored object, so a job re-reading what is stored
    sends one page twice, not every page."""

    likely: bool = True


async def content_upsert_page(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    run_id: int,
    items: Sequence[ContentRecord],
    *,
    rejected: Sequence[RejectedObject] = (),
    seen_by: int | None = None,
    new_pages: NewPages | None = None,
) -> int:
    """Store one page of objects fetched by `run_id`, writing only the rows that changed;
    returns the rows written.

    What cannot be stored, and `rejected` (what the caller could not read), is recorded in
    content_rejects, in the same transaction when `db` is one. With `seen_by`, the page's ids
    are recorded as seen by that fetch job, in the same transaction, for its deletion sweep
    and its count of objects: a rejected object's too (HubSpot holds it and counts it), under
    a key of its own when it has no usable id. With `new_pages` still `likely`, the page is
    first tried as new objects; without it (a push's read-back: stored objects) it is compared.
    """
    columns, rejects = content_page_columns(items)
    all_rejects = [*rejected, *rejects]
    await content_rejects_add(db, portal_id, content_type, run_id, all_rejects)
    written = 0
    if columns["hubspot_ids"]:
        params = {
            "portal_id": portal_id,
            "content_type": str(content_type),
            "run_id": run_id,
            "fields": columns["fields"],
            "documents": columns["documents"],
        }
        inserted = None
        if new_pages is not None and new_pages.likely:
            inserted = await _insert_new_page(db, params, columns["hubspot_ids"][0])
            new_pages.likely = inserted is not None
        if inserted is None:
            written = await db.execute("content_upsert_page", params)
        else:
            written = inserted
    if seen_by is not None:
        seen = list(columns["hubspot_ids"])
        seen += [fetch_seen_key(r) for r in all_rejects]
        await fetch_seen_add(db, seen_by, portal_id, seen)
    return written


async def _insert_new_page(db: Database, params: dict[str, Any], first_id: str) -> int | None:
    """The page inserted as new objects, without comparing (a first sync's page): the rows
    inserted, or None, nothing written, when it holds a stored object."""
    inserted: int | None = await db.one(
        "content_insert_new_page", {**params, "first_id": first_id}, row=scalar_row
    )
    return inserted


async def content_rows(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    *,
    with_data: bool,
    include_deleted: bool,
    batch_size: int = 2000,
) -> AsyncIterator[dict[str, Any]]:
    """The type's rows in hubspot_id order, fetched `batch_size` at a time from the server;
    the objects marked deleted only with `include_deleted`."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "with_data": with_data,
        "include_deleted": include_deleted,
    }
    rows = db.stream("content_export_rows", params, row=dict_row, batch_size=batch_size)
    async for row in rows:
        yield row


async def content_export_counts(
    db: Database, portal_id: int, content_type: ContentType, *, include_deleted: bool
) -> ExportCounts:
    """What `content_rows` would yield of the type, and how many of its objects are deleted."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "include_deleted": include_deleted,
    }
    return await db.only("content_export_counts", params, row=model_row(ExportCounts))


async def content_page(
    db: Database,
    portal_id: int,
    *,
    content_type: ContentType | None = None,
    pattern: str | None = None,
    after: tuple[ContentType, str] | None = None,
    limit: int,
) -> KeysetPage[ContentItem, tuple[ContentType, str]]:
    """Up to `limit` live objects after the key `after`, optionally of one type and matching
    the ILIKE `pattern` in name, slug or url."""
    params = {"portal_id": portal_id, "pattern": pattern, "limit": limit}
    where = {
        "content_type": str(content_type) if content_type else None,
        "after_type": str(after[0]) if after else None,
        "after_id": after[1] if after else None,
    }
    rows = await db.all("content_page", {**params, **where}, row=model_row(ContentItem))
    return KeysetPage.of(rows, limit, lambda item: (item.content_type, item.hubspot_id))


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


async def content_count_by_type(
    db: Database, portal_ids: Sequence[int]
) -> dict[tuple[int, ContentType], ContentCounts]:
    """Stored objects by (portal, type); a pair with nothing stored is absent."""
    params = {"portal_ids": list(portal_ids)}
    rows = await db.all("content_count_by_type", params, row=model_row(_TypeCounts))
    return {(r.portal_id, r.content_type): r.counts for r in rows}
