"""Content history: an object's versions, a version with its document, the changes feed of a
portal, retention (versions.sql). Versions are read from the view content_history: the rows of
content_versions and the first versions still kept in their rows of content_items.

    versions = await versions_of_object(db, portal_id, ContentType.BLOG_POST, "123")
    found = await version_documents(db, portal_id, ContentType.BLOG_POST, "123", [3, 4])
    page = await changes_page(db, portal_id, ChangeFilter(since_run=17), limit=100)  # pages
    async for change in changes_stream(scoped, portal_id, ChangeFilter(since=midnight)): ...
    counts = await versions_prune(db, timedelta(days=90))                  # login role

The history itself is written by triggers on content_items (migrations/functions/history.sql),
whatever statement writes content, so nothing here writes a version. Retention
(`versions_prune`) also removes the objects deleted in HubSpot before its cutoff, rows and
versions. Reads run as the API's caller (`Database.as_user`) or as the operator's login role;
row-level security is that of content_items. `changes_stream` reads through a server-side
cursor and must run inside a transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.rows import scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import KeysetPage, model_row
from smuves_sync.models import ContentEvent, ContentType

# Versions a prune batch looks at: small enough that a batch is a short transaction.
PRUNE_BATCH = 5000
# Deleted objects a batch of their retention removes, each with all its versions.
PRUNE_DELETED_BATCH = 500


@dataclass(frozen=True, slots=True)
class ContentVersion:
    """One version of an object: what began it, its document's hash, the runs it held for."""

    content_type: ContentType
    hubspot_id: str
    version: int
    event: ContentEvent
    hash: str | None
    # The run whose fetch stored this version and the one that replaced it (None: written
    # outside a fetch; until: still current).
    seen_from_run: int | None
    seen_until_run: int | None
    recorded_at: datetime
    superseded_at: datetime | None

    @property
    def current(self) -> bool:
        """True for the object's version now (never pruned)."""
        return self.superseded_at is None


@dataclass(frozen=True, slots=True)
class VersionDocument:
    """A version with its document (the object as HubSpot sent it)."""

    version: ContentVersion
    document: Any


@dataclass(frozen=True, slots=True)
class ContentChange:
    """One entry of a portal's changes feed: a version and the event that began it."""

    id: int
    recorded_at: datetime
    run_id: int | None
    content_type: ContentType
    hubspot_id: str
    version: int
    event: ContentEvent
    # The object's name now (the row of content_items, deleted ones included).
    name: str | None

    @property
    def key(self) -> tuple[datetime, int]:
        """The keyset position of this change in the feed."""
        return self.recorded_at, self.id


@dataclass(frozen=True, slots=True)
class VersionsPruneCounts:
    """What a prune of content history did (or, in a dry run, would do)."""

    cutoff: datetime
    scanned: int
    deleted: int
    documents_moved: int
    # objects deleted in HubSpot before the cutoff, removed with their versions
    objects: int = 0
    object_versions: int = 0


def _object(portal_id: int, content_type: ContentType, hubspot_id: str) -> dict[str, Any]:
    return {"portal_id": portal_id, "content_type": str(content_type), "hubspot_id": hubspot_id}


async def versions_of_object(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    hubspot_id: str,
    *,
    after: int | None = None,
    limit: int | None = None,
) -> list[ContentVersion]:
    """The object's versions in order after version `after`, at most `limit` (None: all);
    empty when it has none or is not visible."""
    params = {**_object(portal_id, content_type, hubspot_id), "after": after, "limit": limit}
    return await db.all("versions_of_object", params, row=model_row(ContentVersion))


async def version_latest(
    db: Database, portal_id: int, content_type: ContentType, hubspot_id: str
) -> int | None:
    """The number of the object's current version (its row's `version`: the one look-up of it,
    `version_latest`); None when it has none or is not visible."""
    params = _object(portal_id, content_type, hubspot_id)
    found: int | None = await db.one("version_latest", params, row=scalar_row)
    return found


def compared_versions(latest: int, older: int | None, newer: int | None) -> tuple[int | None, int]:
    """The two versions a diff of an object compares, as (older, newer): `newer` is the latest
    unless asked, `older` the one before it unless asked; version 1 is compared with nothing
    (None)."""
    newer = latest if newer is None else newer
    return (newer - 1 or None) if older is None else older, newer


async def version_documents(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    hubspot_id: str,
    versions: Sequence[int],
) -> dict[int, VersionDocument]:
    """The asked versions of the object that exist, with their documents, by number."""
    params = {**_object(portal_id, content_type, hubspot_id), "versions": list(versions)}
    rows = await db.all("version_documents", params, row=model_row(VersionDocument))
    return {row.version.version: row for row in rows}


@dataclass(frozen=True, slots=True)
class ChangeFilter:
    """Which changes of a portal: made by run `since_run` or a later one, recorded at or after
    `since`, of one type (None: any)."""

    since_run: int | None = None
    since: datetime | None = None
    content_type: ContentType | None = None


EVERY_CHANGE = ChangeFilter()


def _changes_params(
    portal_id: int,
    where: ChangeFilter,
    after: tuple[datetime, int] | None,
    limit: int | None,
) -> dict[str, Any]:
    return {
        "portal_id": portal_id,
        "since_run": where.since_run,
        "since": where.since,
        "content_type": str(where.content_type) if where.content_type else None,
        "after_at": after[0] if after else None,
        "after_id": after[1] if after else None,
        "limit": limit,
    }


async def changes_page(
    db: Database,
    portal_id: int,
    where: ChangeFilter = EVERY_CHANGE,
    *,
    after: tuple[datetime, int] | None = None,
    limit: int,
) -> KeysetPage[ContentChange, tuple[datetime, int]]:
    """Up to `limit` changes of the portal `where` picks, after the key `after`, in the order
    recorded."""
    params = _changes_params(portal_id, where, after, limit + 1)
    rows = await db.all("versions_changes", params, row=model_row(ContentChange))
    return KeysetPage.of(rows, limit, lambda change: change.key)


async def changes_stream(
    db: Database,
    portal_id: int,
    where: ChangeFilter = EVERY_CHANGE,
    *,
    batch_size: int = 2000,
) -> AsyncIterator[ContentChange]:
    """Every change of the portal `where` picks, in the order recorded, fetched `batch_size`
    at a time through a server-side cursor."""
    params = _changes_params(portal_id, where, None, None)
    rows = db.stream(
        "versions_changes", params, row=model_row(ContentChange), batch_size=batch_size
    )
    async for change in rows:
        yield change


async def versions_prune(
    db: Database,
    older_than: timedelta,
    *,
    dry_run: bool = False,
    batch_size: int = PRUNE_BATCH,
    now: datetime | None = None,
) -> VersionsPruneCounts:
    """Delete the versions of every portal superseded more than `older_than` ago, and the
    objects deleted in HubSpot more than `older_than` ago with all their versions, a batch
    per transaction (`db` unscoped: each call commits); the current versions of the other
    objects stay. With `dry_run`, only count them."""
    cutoff = await db.only(
        "versions_prune_cutoff", {"older_than": older_than, "now": now}, row=scalar_row
    )
    portals = await db.all("versions_portals", {"cutoff": cutoff}, row=scalar_row)
    scanned = deleted = moved = objects = object_versions = 0
    for portal_id in portals:
        # The deleted objects first: their old versions need no document moved.
        gone = await _prune_deleted(db, portal_id, cutoff, dry_run=dry_run)
        objects += gone.objects
        object_versions += gone.versions
        after: tuple[datetime, int] | None = None
        while True:
            batch = await db.only(
                "versions_prune_batch",
                {
                    "portal_id": portal_id,
                    "cutoff": cutoff,
                    "after_at": after[0] if after else None,
                    "after_id": after[1] if after else None,
                    "limit": batch_size,
                    "dry_run": dry_run,
                },
                row=model_row(_PruneBatch),
            )
            scanned += batch.scanned
            deleted += batch.deleted
            moved += batch.documents_moved
            if batch.scanned < batch_size or batch.last_recorded_at is None:
                break
            after = (batch.last_recorded_at, batch.last_id or 0)
    return VersionsPruneCounts(
        cutoff=cutoff,
        scanned=scanned,
        deleted=deleted,
        documents_moved=moved,
        objects=objects,
        object_versions=object_versions,
    )


@dataclass(frozen=True, slots=True)
class _DeletedBatch:
    objects: int
    versions: int


async def _prune_deleted(
    db: Database, portal_id: int, cutoff: datetime, *, dry_run: bool
) -> _DeletedBatch:
    """Remove the portal's objects deleted before `cutoff` with their versions, a batch per
    transaction (a dry run counts them in one)."""
    objects = versions = 0
    while True:
        params = {
            "portal_id": portal_id,
            "cutoff": cutoff,
            "limit": PRUNE_DELETED_BATCH,
            "dry_run": dry_run,
        }
        batch = await db.only("versions_prune_deleted", params, row=model_row(_DeletedBatch))
        objects += batch.objects
        versions += batch.versions
        if dry_run or batch.objects < PRUNE_DELETED_BATCH:
            return _DeletedBatch(objects, versions)


@dataclass(frozen=True, slots=True)
class _PruneBatch:
    scanned: int
    deleted: int
    documents_moved: int
    last_recorded_at: datetime | None
    last_id: int | None
