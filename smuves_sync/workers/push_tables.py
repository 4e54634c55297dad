"""Publishing the HubDB tables a push wrote to: only a table whose draft holds no edit but ours.

HubSpot publishes a table's whole draft (`…/draft/publish`): a colleague's unfinished rows
would go live with ours. The draft table's `updatedAt` moves with every draft edit and its
`publishedAt` with each publication (`Writer.table_draft`), so a table's draft holds edits
other than ours when its `updatedAt` is later than both its `publishedAt` and the last of our
own draft writes to it (as HubSpot dated them in its answers). That is asked twice per table,
one request each: before the push's first write to it, and once its rows are written. A table
that held other edits at either moment is not published: its items are `held` ("the draft has
other edits"). Otherwise it is published, and its rows read back as published: `applied` where
they show the new values (stored through the ordinary upsert, marked as the changeset's),
else `failed`.

What it cannot see: a colleague's draft edit made between two of our writes to the same table
and dated before the last of them. A push resumed after a crash counts the drafts of its
earlier attempt (read back first) as its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from smuves_sync.db.push import Outcome, PushItem
from smuves_sync.errors import WriteOutcomeUnknown
from smuves_sync.hubspot.writes import Writer
from smuves_sync.workers.push_batch import BatchResult, PushBatch
from smuves_sync.workers.push_rules import verdict

if TYPE_CHECKING:
    from smuves_sync.workers.push import PushJob

log = logging.getLogger(__name__)

HELD = "the draft has other edits"


@dataclass
class Tables:
    """What a push job knows of the tables it writes rows to."""

    # tables whose draft held other edits before the push wrote to them
    dirty: set[str] = field(default_factory=set)
    checked: set[str] = field(default_factory=set)
    # the latest `updatedAt` HubSpot gave one of our draft writes, per table
    ours: dict[str, str] = field(default_factory=dict)
    written: dict[str, PushItem] = field(default_factory=dict)

    def add(self, result: BatchResult) -> None:
        """The rows a batch wrote to the drafts, and when HubSpot dated them."""
        self.written.update(result.written)
        for hubspot_id, updated in result.written_at.items():
            table = table_of(hubspot_id)
            if updated is not None and _later(updated, self.ours.get(table)):
                self.ours[table] = updated

    async def check_before(self, writer: Writer, table: str) -> None:
        """Before the first write to `table`: whether its draft holds others' edits."""
        if table in self.checked:
            return
        self.checked.add(table)
        if await self.edited_by_others(writer, table):
            log.info("HubDB table %s: %s before the push wrote to it", table, HELD)
            self.dirty.add(table)

    async def edited_by_others(self, writer: Writer, table: str) -> bool:
        draft = await writer.table_draft(table)
        updated, published = draft.get("updatedAt"), draft.get("publishedAt")
        if not isinstance(updated, str):
            return True  # not dated: nothing says the draft is clean
        mine = self.ours.get(table)
        return _later(updated, published if isinstance(published, str) else None) and (
            mine is None or _later(updated, mine)
        )


def table_of(hubspot_id: str) -> str:
    """A stored row id's table ('<table>:<row>')."""
    return hubspot_id.rpartition(":")[0]


async def publish_tables(push: PushJob, writer: Writer, batch: PushBatch, tables: Tables) -> None:
    """Publish (or hold) each table the push wrote rows to, and read its rows back."""
    by_table: dict[str, dict[str, PushItem]] = {}
    for hubspot_id, item in tables.written.items():
        by_table.setdefault(table_of(hubspot_id), {})[hubspot_id] = item
    for table, items in by_table.items():
        result = BatchResult()
        if table in tables.dirty or await tables.edited_by_others(writer, table):
            log.info("portal %s: HubDB table %s: %s; held", push.job.portal_id, table, HELD)
            result.outcomes += [Outcome(h, "held", HELD) for h in items]
        else:
            try:
                await writer.publish_table(table)
            except WriteOutcomeUnknown as lost:
                log.warning("HubDB table %s: %s; deciding by reading back", table, lost)
            back = await batch.read_published(list(items))
            for hubspot_id, item in items.items():
                record = back.get(hubspot_id)
                decided = verdict(item, _raw(record), None)
                result.outcomes.append(Outcome(hubspot_id, decided.action, decided.reason))
                if record is not None:
                    result.records.append(record)
        await push.settle(result, push.row_intents)


def _raw(record: Any) -> Mapping[str, Any] | None:
    return None if record is None else record.raw


def _later(a: str, b: str | None) -> bool:
    """Whether HubSpot's time `a` is after `b` (None: the beginning of time)."""
    if b is None:
        return True
    try:
        return datetime.fromisoformat(a) > datetime.fromisoformat(b)
    except ValueError:
        return a > b
