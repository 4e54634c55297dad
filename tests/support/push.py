"""Push tests' helpers: a changeset planted from what the store holds, and its items read back.

changeset = await plant_changeset(sync.db, portal, ContentType.SITE_PAGE,
                                  {"3": {"htmlTitle": "New"}})
states = await item_states(sync.db, changeset.id)      # {hubspot_id: (state, reason)}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smuves_sync.db import Database
from smuves_sync.db.changesets import (
    Changeset,
    NewChangeset,
    NewItem,
    changeset_bases,
    changeset_create,
    changeset_items_add,
    changeset_items_of,
)
from smuves_sync.models import ContentType
from smuves_sync.workers.push_rules import field_value, updated_of


async def plant_changeset(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    edits: Mapping[str, Mapping[str, Any]],
    *,
    owner_id: Any = None,
) -> Changeset:
    """A draft changeset of `edits` (hubspot_id -> field -> new value), each item based on the
    stored version, as an import of an untouched export with those cells changed makes it."""
    changeset = await changeset_create(db, NewChangeset(portal_id, content_type, owner_id))
    bases = await changeset_bases(db, portal_id, content_type, list(edits))
    items = []
    for hubspot_id, fields in edits.items():
        base = bases[hubspot_id]
        before = {key: field_value(base.data, key) for key in fields}
        items.append(
            NewItem(
                str(content_type),
                hubspot_id,
                "pending",
                base.version,
                updated_of(base.data),
                dict(fields),
                before,
            )
        )
    await changeset_items_add(db, changeset, items)
    return changeset


async def item_states(db: Database, changeset_id: int) -> dict[str, tuple[str, str | None]]:
    """Each item's state and reason, by hubspot_id."""
    return {i.hubspot_id: (i.state, i.reason) for i in await changeset_items_of(db, changeset_id)}
