"""Push tests' helpers: a changeset's items read back (changesets are planted with
`smuves_sync.testing.push_bench.plant_changeset`).

    states = await item_states(sync.db, changeset.id)      # {hubspot_id: (state, reason)}
"""

from __future__ import annotations

from smuves_sync.db import Database
from smuves_sync.db.changesets import changeset_items_of


async def item_states(db: Database, changeset_id: int) -> dict[str, tuple[str, str | None]]:
    """Each item's state and reason, by hubspot_id."""
    return {i.hubspot_id: (i.state, i.reason) for i in await changeset_items_of(db, changeset_id)}
