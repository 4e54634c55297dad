"""Push aids shared by the tests and `scripts/bench_push.py`: a changeset planted from what the
store holds, and the figures of a push measured against the fake HubSpot.

    changeset = await plant_changeset(db, portal, ContentType.SITE_PAGE, {"3": {"htmlTitle": "x"}})
    lost = lost_human_edits(fake, portal, edits_made)   # people's values no longer there
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from smuves_sync.db import Database
from smuves_sync.db.changesets import (
    Changeset,
    NewChangeset,
    NewItem,
    changeset_bases,
    changeset_create,
    changeset_items_add,
)
from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeControl
from smuves_sync.workers.push_rules import field_value, updated_of

# Items stored per statement when a large changeset is planted.
_ITEMS_PER_STATEMENT = 1000


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
    ids = list(edits)
    for start in range(0, len(ids), _ITEMS_PER_STATEMENT):
        chunk = ids[start : start + _ITEMS_PER_STATEMENT]
        bases = await changeset_bases(db, portal_id, content_type, chunk)
        items = []
        for hubspot_id in chunk:
            base, fields = bases[hubspot_id], edits[hubspot_id]
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


def lost_human_edits(
    fake: FakeControl,
    portal_id: int,
    content_type: ContentType,
    made: Iterable[tuple[str, str, Any]],
) -> list[tuple[str, str]]:
    """Of people's edits (hubspot_id, field, value they set), those HubSpot no longer shows;
    and of the edits people made between the push's reads and writes (the fake's write log,
    `person`), those whose " (edited)" mark is gone."""
    live = {
        t.hubspot_id: t.data or {}
        for t in fake.ground_truth(portal_id, content_type, with_data=True)
    }
    lost = [(h, k) for h, k, v in made if field_value(live.get(h, {}), k) != v]
    planned = {(h, k) for h, k, _ in made}
    for entry in fake.write_log(portal_id):
        if entry["op"] != "person" or entry["type"] != str(content_type):
            continue
        for key in entry["keys"]:
            if (entry["id"], key) in planned:
                continue
            if "(edited)" not in str(field_value(live.get(entry["id"], {}), key)):
                lost.append((entry["id"], key))
    return lost
