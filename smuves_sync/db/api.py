"""What the HTTP API reads and writes: noun-verb functions over ``queries/api.sql``.

    async with db.as_user(user_id) as scoped:            # smuves_app, app.user_id set
        await user_sign_in(scoped, "ada@example.com")    # the app_users row, made on first use
        portals = await portal_list(scoped)              # -> list[PortalAccess]
        run, jobs = await run_detail(scoped, run_id)     # one snapshot of both
        page = await content_page(scoped, portal_id, limit=50)

Each function takes a `Database` scoped to the caller with `Database.as_user`; row-level
security then makes another user's rows invisible, so "not found" and "not yours" look the
same. The queue figures of /metrics come from SECURITY DEFINER functions that return counts
only (migrations/0008).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from smuves_sync.db.database import Database
from smuves_sync.db.exports import export_from_row
from smuves_sync.db.pool import Pool
from smuves_sync.db.queries import queries
from smuves_sync.db.rows import job_from_row, run_from_row
from smuves_sync.models import ContentType, Export, Job, Run


@dataclass(frozen=True, slots=True)
class PortalAccess:
    """A portal as one user sees it: with that user's role in it."""

    id: int
    name: str
    owner_id: uuid.UUID
    role: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ContentItem:
    """One live HubSpot object of a portal."""

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


@dataclass(frozen=True, slots=True)
class Notification:
    """Something the user is told: a run finished, a job failed."""

    id: int
    run_id: int | None
    kind: str
    message: str
    created_at: datetime
    read_at: datetime | None


@dataclass(frozen=True, slots=True)
class NotificationPage:
    """Newest first; `last_id` is set when older notifications follow."""

    items: tuple[Notification, ...]
    last_id: int | None


@dataclass(frozen=True, slots=True)
class JobCount:
    """How many jobs of a kind are in a status (and, for pending, how late the oldest is)."""

    kind: str
    status: str
    jobs: int
    oldest_pending_seconds: float | None


@dataclass(frozen=True, slots=True)
class DurationBucket:
    """Finished jobs of a kind and status whose duration falls in bucket `bucket`."""

    kind: str
    status: str
    bucket: int
    jobs: int
    seconds: float


def _portal(row: dict[str, Any]) -> PortalAccess:
    return PortalAccess(
        id=row["id"],
        name=row["name"],
        owner_id=row["owner_id"],
        role=row["role"],
        created_at=row["created_at"],
    )


def _notification(row: dict[str, Any]) -> Notification:
    return Notification(
        id=row["id"],
        run_id=row["run_id"],
        kind=row["kind"],
        message=row["message"],
        created_at=row["created_at"],
        read_at=row["read_at"],
    )


# Same package as Database: its row helpers (_one, _all) are ours to use.


async def user_sign_in(db: Database, email: str | None) -> uuid.UUID:
    """Make sure the scoped user has an app_users row (created on first use); its id."""
    row = await db._one("api_user_sign_in", {"email": email})
    assert row is not None  # a scalar function call always returns one row
    return uuid.UUID(str(row["id"]))


async def portal_list(db: Database) -> list[PortalAccess]:
    """The scoped user's portals, by id."""
    return [_portal(r) for r in await db._all("api_portal_list")]


async def portal_access(db: Database, portal_id: int) -> PortalAccess | None:
    """The portal as the scoped user sees it; None when absent or not theirs."""
    row = await db._one("api_portal_get", {"portal_id": portal_id})
    return _portal(row) if row else None


async def portal_connect(
    db: Database, portal_id: int, name: str, token_encrypted: bytes
) -> tuple[PortalAccess, bool] | None:
    """Add the portal with the scoped user as owner, or give an owned one a new name and
    token; (portal, created). None: the id belongs to a portal the user does not own."""
    params = {"portal_id": portal_id, "name": name, "token_encrypted": token_encrypted}
    row = await db._one("api_portal_insert", params)
    if row is not None:
        return _portal(row), True
    row = await db._one("api_portal_reconnect", params)
    return (_portal(row), False) if row else None


async def portal_delete(db: Database, portal_id: int) -> bool:
    """Delete a portal the scoped user owns, with everything of it; False when not allowed."""
    return await db._one("api_portal_delete", {"portal_id": portal_id}) is not None


async def run_detail(db: Database, run_id: int) -> tuple[Run, list[Job]] | None:
    """The run and its jobs (by id) as of one moment; None when absent or not visible."""
    rows = await db._all("api_run_detail", {"run_id": run_id})
    if not rows:
        return None
    first = rows[0]
    run = run_from_row(
        {
            "id": first["run_id_"],
            "portal_id": first["run_portal_id"],
            "owner_id": first["run_owner_id"],
            "kind": first["run_kind"],
            "status": first["run_status"],
            "content_types": first["run_content_types"],
            "created_at": first["run_created_at"],
            "started_at": first["run_started_at"],
            "finished_at": first["run_finished_at"],
        }
    )
    return run, [job_from_row(r) for r in rows if r["id"] is not None]


async def run_stop(db: Database, run_id: int, *, now: datetime | None = None) -> Run | None:
    """Stop the run's open jobs and settle it; None when the run is not visible."""
    row = await db._one("api_run_stop", {"run_id": run_id, "now": now})
    return run_from_row(row) if row else None


async def export_get(db: Database, export_id: int) -> Export | None:
    """The export, or None when absent or not visible."""
    row = await db._one("api_export_get", {"export_id": export_id})
    return export_from_row(row) if row else None


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
    rows = await db._all(
        "api_content_page",
        {
            "portal_id": portal_id,
            "content_type": str(content_type) if content_type else None,
            "pattern": pattern,
            "after_type": str(after[0]) if after else None,
            "after_id": after[1] if after else None,
            "limit": limit,
        },
    )
    items = tuple(
        ContentItem(
            content_type=ContentType(r["content_type"]),
            hubspot_id=r["hubspot_id"],
            name=r["name"],
            slug=r["slug"],
            url=r["url"],
            state=r["state"],
            language=r["language"],
            translated_from_id=r["translated_from_id"],
            hubspot_updated_at=r["hubspot_updated_at"],
            archived=r["archived"],
            synced_at=r["synced_at"],
            data=r["data"],
        )
        for r in rows[:limit]
    )
    more = len(rows) > limit
    last_key = (items[-1].content_type, items[-1].hubspot_id) if more and items else None
    return ContentPage(items=items, last_key=last_key)


async def notification_page(db: Database, *, before: int | None, limit: int) -> NotificationPage:
    """The scoped user's notifications older than id `before` (None: the newest)."""
    rows = await db._all("api_notification_list", {"before": before, "limit": limit})
    items = tuple(_notification(r) for r in rows[:limit])
    return NotificationPage(items=items, last_id=items[-1].id if len(rows) > limit else None)


async def notification_mark_read(db: Database, notification_id: int) -> Notification | None:
    """Mark the notification read (the first read time is kept); None when not visible."""
    row = await db._one("api_notification_read", {"notification_id": notification_id})
    return _notification(row) if row else None


async def migration_versions(pool: Pool, *, timeout: timedelta) -> list[int]:
    """The applied migration versions; waits at most `timeout` for a connection."""
    async with (
        pool.connection(timeout=timeout.total_seconds()) as conn,
        conn.cursor() as cur,
    ):
        await cur.execute(queries()["api_migration_versions"])
        return [int(row[0]) for row in await cur.fetchall()]


async def metrics_jobs(db: Database, *, now: datetime | None = None) -> list[JobCount]:
    """Jobs by kind and status across every portal, with the oldest due pending job's age."""
    rows = await db._all("api_metrics_jobs", {"now": now})
    return [
        JobCount(
            kind=r["kind"],
            status=r["status"],
            jobs=r["jobs"],
            oldest_pending_seconds=r["oldest_pending_seconds"],
        )
        for r in rows
    ]


async def metrics_job_durations(db: Database, bounds: Sequence[float]) -> list[DurationBucket]:
    """Finished jobs counted into the duration buckets with upper `bounds` (ascending)."""
    rows = await db._all("api_metrics_job_durations", {"bounds": list(bounds)})
    return [
        DurationBucket(
            kind=r["kind"],
            status=r["status"],
            bucket=r["bucket"],
            jobs=r["jobs"],
            seconds=r["seconds"],
        )
        for r in rows
    ]


def _group_member(r: dict[str, Any]) -> ContentItem:
    # The row shape of content_page's, plus the key asked for (left out here).
    return ContentItem(
        content_type=ContentType(r["content_type"]),
        hubspot_id=r["hubspot_id"],
        name=r["name"],
        slug=r["slug"],
        url=r["url"],
        state=r["state"],
        language=r["language"],
        translated_from_id=r["translated_from_id"],
        hubspot_updated_at=r["hubspot_updated_at"],
        archived=r["archived"],
        synced_at=r["synced_at"],
        data=r["data"],
    )


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
    rows = await db._all(
        "api_content_language_groups",
        {
            "portal_id": portal_id,
            "content_types": [str(key[0]) for key in keys],
            "hubspot_ids": [key[1] for key in keys],
            "with_data": with_data,
        },
    )
    groups: dict[tuple[ContentType, str], list[ContentItem]] = {}
    for r in rows:
        key = (ContentType(r["asked_type"]), r["asked_id"])
        groups.setdefault(key, []).append(_group_member(r))
    return {key: tuple(members) for key, members in groups.items()}
