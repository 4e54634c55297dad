"""changesets and changeset_items: store a changeset with its items, read them back, and the
stored objects an import compares its rows with (changesets.sql).

    async with db.as_user(user_id) as scoped:        # or the operator's login
        changeset = await changeset_create(scoped, NewChangeset(portal_id, ContentType.SITE_PAGE,
                                                                owner_id=user_id))
        await changeset_items_add(scoped, changeset, items)   # NewItem, one statement
    changeset = await changeset_get(db, changeset_id)         # as visible, or None
    items = await changeset_items_of(db, changeset_id)        # key order; state=, after=
    counts = await changeset_counts(db, changeset_id)         # {state: n}
    bases = await changeset_bases(db, portal_id, content_type, ids)   # {id: StoredBase}
    taken = await changeset_slugs_taken(db, portal_id, content_type, {id: slug})

An item's `fields` and `before` hold keys and values as content is stored: text Postgres
cannot hold escaped by `smuves_sync.content_text` (whoever writes them to HubSpot unescapes
them, `content_text.unescape_value`). Who may
insert is the database's: an owner or editor of the portal, as the changeset's owner, with
items not yet pushed; a viewer's insert raises `NotPermitted`, an item naming another
portal's changeset a `DatabaseError` (the composite foreign key).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType

# The states of an item; the first three are an import's, the others a push's.
ITEM_STATES = ("pending", "unchanged", "invalid", "applied", "conflict", "failed", "held")


@dataclass(frozen=True, slots=True)
class Changeset:
    """One changeset: an import (or a rollback of another) of one portal."""

    id: int
    portal_id: int
    owner_id: uuid.UUID | None
    content_type: ContentType | None
    source: str
    rolls_back: int | None
    filename: str | None
    status: str
    publish: str | None
    run_id: int | None
    created_at: datetime
    pushed_at: datetime | None


@dataclass(frozen=True, slots=True)
class ChangesetItem:
    """One object's changed cells in a changeset, and what became of them."""

    changeset_id: int
    portal_id: int
    content_type: ContentType
    hubspot_id: str
    base_version: int | None
    base_updated: str | None
    fields: dict[str, Any]
    before: dict[str, Any]
    state: str
    reason: str | None
    warnings: tuple[str, ...]
    applied_version: int | None
    applied_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewChangeset:
    """What a changeset is created with."""

    portal_id: int
    content_type: ContentType | None
    owner_id: uuid.UUID | None = None
    source: str = "import"
    rolls_back: int | None = None
    filename: str | None = None


@dataclass(frozen=True, slots=True)
class NewItem:
    """An item to store: `fields`/`before` as stored content (escaped text)."""

    content_type: str
    hubspot_id: str
    state: str
    base_version: int | None = None
    base_updated: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    before: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None
    warnings: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class StoredBase:
    """A stored object as an import compares a row with it."""

    hubspot_id: str
    data: dict[str, Any]
    deleted_at: datetime | None
    slug: str | None
    version: int | None


async def changeset_create(db: Database, new: NewChangeset) -> Changeset:
    """A new draft changeset."""
    params = {
        "portal_id": new.portal_id,
        "owner_id": new.owner_id,
        "content_type": None if new.content_type is None else str(new.content_type),
        "source": new.source,
        "rolls_back": new.rolls_back,
        "filename": new.filename,
    }
    return await db.only("changeset_create", params, row=model_row(Changeset))


async def changeset_items_add(db: Database, changeset: Changeset, items: Sequence[NewItem]) -> int:
    """Store `items` in `changeset` (one statement); how many were stored."""
    if not items:
        return 0
    documents = [
        {**asdict(item), "fields": dict(item.fields), "before": dict(item.before)} for item in items
    ]
    for document in documents:
        document["warnings"] = list(document["warnings"])
    params = {
        "changeset_id": changeset.id,
        "portal_id": changeset.portal_id,
        "items": Jsonb(documents),
    }
    return await db.execute("changeset_items_add", params)


async def changeset_get(db: Database, changeset_id: int) -> Changeset | None:
    """The changeset, or None when absent or not visible."""
    return await db.one("changeset_get", {"changeset_id": changeset_id}, row=model_row(Changeset))


async def changeset_items_of(
    db: Database,
    changeset_id: int,
    *,
    state: str | None = None,
    after: tuple[str, str] | None = None,
    limit: int | None = None,
) -> list[ChangesetItem]:
    """The changeset's items in (content_type, hubspot_id) order, after `after`."""
    params = {
        "changeset_id": changeset_id,
        "state": state,
        "after_type": None if after is None else after[0],
        "after_id": None if after is None else after[1],
        "limit": limit,
    }
    return await db.all("changeset_items_of", params, row=model_row(ChangesetItem))


async def changeset_counts(db: Database, changeset_id: int) -> dict[str, int]:
    """How many items of each state the changeset has (every state named, 0 when none)."""
    rows = await db.all("changeset_counts", {"changeset_id": changeset_id}, row=dict_row)
    counts = dict.fromkeys(ITEM_STATES, 0)
    counts.update({row["state"]: row["n"] for row in rows})
    return counts


async def changeset_bases(
    db: Database, portal_id: int, content_type: ContentType, hubspot_ids: Sequence[str]
) -> dict[str, StoredBase]:
    """The stored objects among `hubspot_ids`, each with its current version."""
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "hubspot_ids": list(hubspot_ids),
    }
    rows = await db.all("changeset_bases", params, row=dict_row)
    return {
        row["hubspot_id"]: StoredBase(
            row["hubspot_id"], row["data"], row["deleted_at"], row["slug"], row["version"]
        )
        for row in rows
    }


async def changeset_slugs_taken(
    db: Database, portal_id: int, content_type: ContentType, wanted: Mapping[str, str]
) -> dict[str, str]:
    """Of `wanted` (hubspot_id -> new slug), the ids whose slug another live object of the
    type holds, each with that object's id."""
    if not wanted:
        return {}
    params = {
        "portal_id": portal_id,
        "content_type": str(content_type),
        "hubspot_ids": list(wanted),
        "slugs": list(wanted.values()),
    }
    rows = await db.all("changeset_slugs_taken", params, row=dict_row)
    return {row["hubspot_id"]: row["held_by"] for row in rows}
