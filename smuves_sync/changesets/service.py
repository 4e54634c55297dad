"""Importing a changeset, rolling one back, and the preview of either.

    imported = await import_changeset(db, portal_id, changes, owner_id=user, filename=name)
    rolled = await rollback_changeset(db, changeset_id, owner_id=user)
    preview = await changeset_preview(db, changeset_id)          # None: not visible

`db` is the caller's: the API's user session (`Database.as_user`: row-level security decides
who may store, a viewer's store raises `NotPermitted`) or the operator's login (the CLI). The
changeset and its items are stored in one transaction: a file is stored whole or not at all.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from smuves_sync.changesets.compare import compare_rows
from smuves_sync.changesets.files import ChangeRow, Changes
from smuves_sync.content_text import unescape_text, unescape_value
from smuves_sync.db import Database
from smuves_sync.db.changesets import (
    Changeset,
    ChangesetItem,
    NewChangeset,
    NewItem,
    changeset_counts,
    changeset_create,
    changeset_get,
    changeset_items_add,
    changeset_items_of,
)
from smuves_sync.errors import InvalidInput, NotFound
from smuves_sync.models import ContentType

# A batch of HubSpot's batch endpoints (WRITES.md: 100 inputs).
BATCH = 100
# States of items whose fields differ from their base (an import's pending, a push's others).
_CHANGED = ("pending", "applied", "conflict", "failed", "held")


@dataclass(frozen=True, slots=True)
class Counts:
    """An import's counts: items that change something, that change nothing, that are bad."""

    changed: int
    unchanged: int
    invalid: int

    @classmethod
    def of(cls, states: Mapping[str, int]) -> Counts:
        """The counts of a changeset's items by state."""
        return cls(
            sum(states.get(s, 0) for s in _CHANGED),
            states.get("unchanged", 0),
            states.get("invalid", 0),
        )

    def as_dict(self) -> dict[str, int]:
        """`{"changed": n, "unchanged": n, "invalid": n}`."""
        return {"changed": self.changed, "unchanged": self.unchanged, "invalid": self.invalid}


@dataclass(frozen=True, slots=True)
class Preview:
    """What a changeset would do: its items, their counts by state, and the HubSpot requests
    a push of its pending items costs (total, and by type)."""

    changeset: Changeset
    states: Mapping[str, int]
    items: Sequence[ChangesetItem]
    requests: Mapping[str, int]

    @property
    def counts(self) -> Counts:
        """Changed, unchanged, invalid."""
        return Counts.of(self.states)

    @property
    def request_total(self) -> int:
        """All the requests of the push."""
        return sum(self.requests.values())

    @property
    def warnings(self) -> list[tuple[ChangesetItem, str]]:
        """Each warning with its item."""
        return [(item, warning) for item in self.items for warning in item.warnings]


def shown(value: Any) -> Any:
    """A stored value as a person reads it (the text escapes undone)."""
    return unescape_value(value)


async def import_changeset(
    db: Database,
    portal_id: int,
    changes: Changes,
    *,
    owner_id: uuid.UUID | None,
    filename: str | None,
) -> tuple[Changeset, Counts]:
    """Store `changes` as a new changeset of `portal_id`, compared with the stored versions."""
    async with db.transaction() as scoped:
        items = await compare_rows(scoped, portal_id, changes)
        new = NewChangeset(portal_id, changes.content_type, owner_id, "import", None, filename)
        changeset = await changeset_create(scoped, new)
        await changeset_items_add(scoped, changeset, items)
    return changeset, Counts.of(Counter(item.state for item in items))


async def rollback_changeset(
    db: Database, changeset_id: int, *, owner_id: uuid.UUID | None
) -> tuple[Changeset, Counts]:
    """A new changeset that puts back what `changeset_id`'s push changed: for each applied
    item, its `before` values, based on the version the push produced."""
    async with db.transaction() as scoped:
        source = await changeset_get(scoped, changeset_id)
        if source is None:
            raise NotFound(f"changeset {changeset_id}")
        applied = await changeset_items_of(scoped, changeset_id, state="applied")
        if not applied:
            raise InvalidInput(f"changeset {changeset_id} has no applied items to roll back")
        items: list[NewItem] = []
        for content_type in sorted({item.content_type for item in applied}):
            of_type = [item for item in applied if item.content_type is content_type]
            items.extend(await _rollback_items(scoped, source.portal_id, content_type, of_type))
        types = {item.content_type for item in applied}
        new = NewChangeset(
            source.portal_id,
            next(iter(types)) if len(types) == 1 else None,
            owner_id,
            "rollback",
            changeset_id,
            None,
        )
        changeset = await changeset_create(scoped, new)
        await changeset_items_add(scoped, changeset, items)
    return changeset, Counts.of(Counter(item.state for item in items))


async def _rollback_items(
    db: Database, portal_id: int, content_type: ContentType, applied: Sequence[ChangesetItem]
) -> list[NewItem]:
    rows = [
        ChangeRow(
            item.hubspot_id,
            item.applied_version,
            {unescape_text(name): value for name, value in item.before.items()},
            text=False,
            stored=True,
        )
        for item in applied
    ]
    # Each is compared with the version the push produced (its `_updated` is that version's):
    # a field someone has since put back needs nothing, an object edited since is warned of.
    return await compare_rows(db, portal_id, Changes(content_type, rows))


async def changeset_preview(
    db: Database,
    changeset_id: int,
    *,
    limit: int | None = None,
    after: tuple[str, str] | None = None,
) -> Preview | None:
    """The changeset's preview (`limit` items after the key `after`; None: all), or None if
    not visible."""
    changeset = await changeset_get(db, changeset_id)
    if changeset is None:
        return None
    states = await changeset_counts(db, changeset_id)
    items = await changeset_items_of(db, changeset_id, limit=limit, after=after)
    pending = await changeset_items_of(db, changeset_id, state="pending")
    return Preview(changeset, states, items, push_requests(pending))


def push_requests(items: Sequence[ChangesetItem]) -> dict[str, int]:
    """The HubSpot requests a push of `items` costs, by type: per batch of 100 a read, a write
    and a read-back; a redirect (no batch endpoint) a read, a PATCH and a read-back each; HubDB
    rows per table in batches of 100, and one publish per table."""
    by_type = Counter(item.content_type for item in items)
    requests: dict[str, int] = {}
    for content_type, count in sorted(by_type.items()):
        if content_type is ContentType.URL_REDIRECT:
            requests[content_type] = 3 * count
        elif content_type is ContentType.HUBDB_ROW:
            tables = Counter(
                item.hubspot_id.split(":", 1)[0]
                for item in items
                if item.content_type is content_type
            )
            requests[content_type] = sum(3 * math.ceil(n / BATCH) + 1 for n in tables.values())
        else:
            requests[content_type] = 3 * math.ceil(count / BATCH)
    return requests
