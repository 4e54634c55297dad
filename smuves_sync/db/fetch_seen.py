"""What a fetch job saw, the deletion sweep over it, and the last confirmation of a portal's
type (fetch_seen.sql).

    async with db.for_job(job) as scoped:                 # under the job's lease
        await fetch_seen_start(scoped, job_id, portal_id)   # a listing starts
        ids = await fetch_seen_unseen(scoped, job, after="", limit=100)
        await fetch_seen_mark_deleted(scoped, portal_id, content_type, run_id, confirmed_gone)
        await fetch_seen_sync_confirm(scoped, portal_id, content_type, run_id=..., job_id=...,
                                      seen=..., deleted=...)

What a fetch job saw is kept per job in `fetch_seen` (an unlogged table), written in each
page's transaction by `content.content_upsert_page`; when a type was last confirmed, how its
last fetch read it and when that listing began is one row per portal and type
(`content_syncs`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import scalar_row

from smuves_sync.content_fields import RejectedObject
from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job


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
    # How it read (copied from its job's fetch_reads row): "full" or "incremental", when its
    # listing began, and when the last full and the last incremental listing of the type began.
    mode: str = "full"
    listing_started_at: datetime | None = None
    last_full_listing_at: datetime | None = None
    last_incremental_listing_at: datetime | None = None


# Starts the key under which a fetch records an object it saw without a usable id: U+FDD0 is
# a Unicode noncharacter (the escape mark of `content_text`), in no HubSpot id, so the key
# matches no stored object, and the sweep never takes it for one.
_UNIDENTIFIED = "\ufdd0unidentified:"


def fetch_seen_key(reject: RejectedObject) -> str:
    """What `fetch_seen` records for a rejected object: its id, or for one without a usable id
    a key made from its bytes, so that it is counted once however often it is listed."""
    if reject.hubspot_id is not None:
        return reject.hubspot_id
    digest = hashlib.sha256(reject.raw).hexdigest()
    return f"{_UNIDENTIFIED}{reject.size}:{digest}"


async def fetch_seen_add(
    db: Database, job_id: int, portal_id: int, hubspot_ids: Sequence[str]
) -> int:
    """Record `hubspot_ids` as seen by fetch job `job_id`; how many it had not seen before."""
    if not hubspot_ids:
        return 0
    params = {"job_id": job_id, "portal_id": portal_id, "hubspot_ids": list(hubspot_ids)}
    return await db.execute("content_seen_add", params)


async def fetch_seen_start(db: Database, job_id: int, portal_id: int) -> None:
    """A listing of job `job_id` starts from the beginning: forget what it saw, set its marker."""
    await db.execute("content_seen_forget", {"job_id": job_id})
    await db.execute("content_seen_mark", {"job_id": job_id, "portal_id": portal_id})


async def fetch_seen_intact(db: Database, job_id: int) -> bool:
    """Whether what job `job_id` has seen is all still recorded (its marker is there)."""
    return bool(await db.one("content_seen_intact", {"job_id": job_id}, row=scalar_row))


async def fetch_seen_count(db: Database, job_id: int) -> int:
    """How many distinct objects job `job_id` has seen."""
    return int(await db.one("content_seen_count", {"job_id": job_id}, row=scalar_row) or 0)


async def fetch_seen_unseen(
    db: Database,
    job: Job,
    *,
    after: str = "",
    limit: int,
    archived: bool | None = None,
    prefix: str | None = None,
) -> list[str]:
    """Up to `limit` ids, in order after `after`, of the job's portal's objects of its type
    stored as present (live or archived) that fetch job `job` has not seen: the deletion
    sweep's candidates."""
    extra = {"archived": archived, "prefix": prefix}
    return await _job_ids(db, "content_unseen", job, after=after, limit=limit, **extra)


async def fetch_seen_mark_deleted(
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


async def fetch_seen_sync_confirm(
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


async def fetch_seen_sync_get(
    db: Database, portal_id: int, content_type: ContentType
) -> ContentSync | None:
    """The last completed fetch of the portal's type, if there is one."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    return await db.one("content_sync_get", params, row=model_row(ContentSync))


async def fetch_seen_unstored(db: Database, job: Job, *, after: str = "", limit: int) -> list[str]:
    """Up to `limit` ids, in order after `after`, that fetch job `job` saw and that are not
    stored as present: listed by id only, to be read and stored."""
    return await _job_ids(db, "content_seen_unstored", job, after=after, limit=limit)


async def fetch_seen_stored_live(db: Database, job: Job, hubspot_ids: Sequence[str]) -> list[str]:
    """Which of `hubspot_ids` the job's portal holds stored live, of the job's type (the ids an
    archived listing showed that the store has not seen archived yet)."""
    if not hubspot_ids:
        return []
    params = {"portal_id": job.portal_id, "content_type": str(job.content_type)}
    rows = await db.all(
        "content_stored_live_among", {**params, "hubspot_ids": list(hubspot_ids)}, row=scalar_row
    )
    return [str(hubspot_id) for hubspot_id in rows]


async def _job_ids(db: Database, query: str, job: Job, **params: object) -> list[str]:
    """The ids named query `query` lists for fetch job `job`'s portal and type."""
    keys = {"portal_id": job.portal_id, "content_type": str(job.content_type), "job_id": job.id}
    rows = await db.all(query, {**keys, **params}, row=scalar_row)
    return [str(hubspot_id) for hubspot_id in rows]


@dataclass(frozen=True, slots=True)
class PresentCounts:
    """A type's objects stored as present."""

    live: int
    archived: int


async def fetch_seen_present_counts(
    db: Database, portal_id: int, content_type: ContentType
) -> PresentCounts:
    """How many of the type's objects are stored as live and as archived (not deleted)."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    found = await db.one("content_present_counts", params, row=model_row(PresentCounts))
    return found or PresentCounts(0, 0)


@dataclass(frozen=True, slots=True)
class _ParentCount:
    parent_id: str
    live: int
    archived: int


async def fetch_seen_children_present(
    db: Database, portal_id: int, content_type: ContentType
) -> dict[str, PresentCounts]:
    """A child type's objects stored as present, per parent id (HubDB rows per table)."""
    params = {"portal_id": portal_id, "content_type": str(content_type)}
    rows = await db.all("content_children_present", params, row=model_row(_ParentCount))
    return {row.parent_id: PresentCounts(row.live, row.archived) for row in rows}


@dataclass(frozen=True, slots=True)
class StoredCreation:
    """An object stored as present, with its creation time as HubSpot sent it (None: none)."""

    hubspot_id: str
    created: object


async def fetch_seen_created(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    *,
    archived: bool,
    keys: Sequence[str],
) -> list[StoredCreation]:
    """The type's objects stored as present in one state, each with the value of the first of
    `keys` (its creation time's fields) that its document holds."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "archived": archived,
        "keys": list(keys),
    }
    return await db.all("content_created_times", params, row=model_row(StoredCreation))
