"""A push job's reads and writes of its changeset: noun-verb functions over ``queries/push.sql``.

    changeset = await push_changeset_of_run(db, portal_id, run_id)      # PushChangeset | None
    items = await push_items_pending(db, changeset.id, content_type, after="", limit=100)
    intent = await push_intent_add(db, job, changeset.id, {hubspot_id: updated, ...})
    await push_intent_mark(db, intent, "sent")
    await push_items_settle(db, changeset.id, content_type, outcomes)
    versions = await push_versions_attribute(db, content_type, ids)     # hubspot_id -> version

Everything runs in the push job's transaction (`Database.for_job`): the database shows a
worker only the changeset of the job whose live lease it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from psycopg.rows import scalar_row

from smuves_sync.content_text import unescape_value
from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job


@dataclass(frozen=True, slots=True)
class PushChangeset:
    """The changeset a push run pushes, and how (`publish`: live or draft)."""

    id: int
    portal_id: int
    publish: str


@dataclass(frozen=True, slots=True)
class PushItem:
    """One pending item: its object, HubSpot's `updated` text of its base version, the fields
    it changes (top-level, or `values.<column>`) and their values in the base."""

    hubspot_id: str
    base_updated: str | None
    fields: dict[str, Any]
    before: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an item was decided."""

    hubspot_id: str
    state: str  # applied, conflict, failed, held
    reason: str | None = None
    applied_version: int | None = None


@dataclass(frozen=True, slots=True)
class OpenIntent:
    """A batch whose intent was committed and whose outcome nobody decided."""

    id: int
    hubspot_ids: list[str] = field(default_factory=list)
    seen_updated: list[str | None] = field(default_factory=list)

    def seen(self) -> dict[str, str | None]:
        """Each object's `updated` as read just before the write."""
        return dict(zip(self.hubspot_ids, self.seen_updated, strict=True))


@dataclass(frozen=True, slots=True)
class ItemCounts:
    items: int
    pending: int


async def push_changeset_of_run(db: Database, portal_id: int, run_id: int) -> PushChangeset | None:
    """The changeset whose push is run `run_id`, as the job's lease lets the worker see it."""
    params = {"portal_id": portal_id, "run_id": run_id}
    return await db.one("push_changeset_of_run", params, row=model_row(PushChangeset))


async def push_items_pending(
    db: Database, changeset_id: int, content_type: ContentType, *, after: str, limit: int
) -> list[PushItem]:
    """The next `limit` pending items of a type after id `after`, in id order."""
    params = {
        "changeset_id": changeset_id,
        "content_type": str(content_type),
        "after": after,
        "limit": limit,
    }
    return _unescaped(await db.all("push_items_pending", params, row=model_row(PushItem)))


async def push_items_by_id(
    db: Database, changeset_id: int, content_type: ContentType, hubspot_ids: Sequence[str]
) -> list[PushItem]:
    """The items of these objects that are still pending."""
    params = {
        "changeset_id": changeset_id,
        "content_type": str(content_type),
        "hubspot_ids": list(hubspot_ids),
    }
    return _unescaped(await db.all("push_items_by_id", params, row=model_row(PushItem)))


async def push_items_count(
    db: Database, changeset_id: int, content_type: ContentType
) -> ItemCounts:
    """How many items of the type the changeset holds, and how many are still pending."""
    params = {"changeset_id": changeset_id, "content_type": str(content_type)}
    return await db.only("push_items_count", params, row=model_row(ItemCounts))


async def push_items_settle(
    db: Database, changeset_id: int, content_type: ContentType, outcomes: Sequence[Outcome]
) -> int:
    """Settle pending items' states (a settled item is left as it is); how many changed."""
    if not outcomes:
        return 0
    params = {
        "changeset_id": changeset_id,
        "content_type": str(content_type),
        "hubspot_ids": [o.hubspot_id for o in outcomes],
        "states": [o.state for o in outcomes],
        "reasons": [o.reason for o in outcomes],
        "versions": [o.applied_version for o in outcomes],
    }
    return await db.execute("push_items_settle", params)


async def push_intent_add(
    db: Database, job: Job, changeset_id: int, seen: Mapping[str, str | None]
) -> int:
    """Record that a batch of these objects (id -> HubSpot's `updated` as read just before)
    is about to be sent; the intent's id."""
    params = {
        "portal_id": job.portal_id,
        "changeset_id": changeset_id,
        "job_id": job.id,
        "content_type": str(job.content_type),
        "hubspot_ids": list(seen),
        "seen_updated": list(seen.values()),
    }
    return await db.only("push_intent_add", params, row=scalar_row)


async def push_intent_mark(db: Database, intent_id: int, state: str) -> None:
    """Move an intent on: `sent` (HubSpot answered) or `decided` (its items settled)."""
    await db.execute("push_intent_mark", {"intent_id": intent_id, "state": state})


async def push_intents_open(
    db: Database, changeset_id: int, content_type: ContentType
) -> list[OpenIntent]:
    """The batches of the type whose outcome is still to be decided, oldest first."""
    params = {"changeset_id": changeset_id, "content_type": str(content_type)}
    return await db.all("push_intents_open", params, row=model_row(OpenIntent))


async def push_versions_attribute(
    db: Database, content_type: ContentType, hubspot_ids: Sequence[str]
) -> dict[str, int]:
    """Mark the newest stored version of each object as made by the job's changeset; their
    numbers, by id."""
    if not hubspot_ids:
        return {}
    params = {"content_type": str(content_type), "hubspot_ids": list(hubspot_ids)}
    rows = await db.all("push_versions_attribute", params, row=model_row(_Version))
    return {r.hubspot_id: r.version for r in rows}


@dataclass(frozen=True, slots=True)
class PushStart:
    """A changeset about to be pushed: its portal, status, current push run, pending types."""

    id: int
    portal_id: int
    status: str
    run_id: int | None
    content_types: list[str]


async def push_start_plan(db: Database, changeset_id: int) -> PushStart | None:
    """The changeset as the caller may see it, with the types of its pending items."""
    params = {"changeset_id": changeset_id}
    return await db.one("push_start_plan", params, row=model_row(PushStart))


async def push_begin(db: Database, changeset_id: int, run_id: int, publish: str) -> str | None:
    """Set the changeset pushing by run `run_id` (changeset_push_begin): the status it had,
    'pushing' when another push holds it (nothing changed), None when it is not visible."""
    params = {"changeset_id": changeset_id, "run_id": run_id, "publish": publish}
    status: str | None = await db.only("push_begin", params, row=scalar_row)
    return status


async def push_item_states(db: Database, changeset_id: int) -> dict[str, dict[str, int]]:
    """How many of the changeset's items are in each state, per type (as the caller sees)."""
    rows = await db.all("push_item_states", {"changeset_id": changeset_id}, row=model_row(_State))
    found: dict[str, dict[str, int]] = {}
    for row in rows:
        found.setdefault(row.content_type, {})[row.state] = row.items
    return found


@dataclass(frozen=True, slots=True)
class _State:
    content_type: str
    state: str
    items: int


def _unescaped(items: list[PushItem]) -> list[PushItem]:
    """Items with their values as HubSpot holds them: stored text is escaped where Postgres
    cannot hold it (`content_text`), and HubSpot is sent, and compared with, the original."""
    return [
        replace(i, fields=unescape_value(i.fields), before=unescape_value(i.before)) for i in items
    ]


@dataclass(frozen=True, slots=True)
class _Version:
    hubspot_id: str
    version: int
