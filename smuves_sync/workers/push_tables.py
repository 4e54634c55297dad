"""Publishing the HubDB tables a push wrote to: only a table whose draft holds no edit but ours.

HubSpot publishes a table's whole draft (`…/draft/publish`): a colleague's unfinished rows
would go live with ours. So, per table, once its rows are written: its draft and its published
rows are listed (`Writer.table_draft_rows`, 1,000 a request); our rows must show their new
values in the draft (else `failed`); any other difference between draft and published — a row
that is not ours, or a field of ours we did not change — means the draft has other edits, and
the table's items are `held`, nothing published. Otherwise the table is published and its rows
read back as published: `applied` where they show the new values, stored through the ordinary
upsert with the other applied objects.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from smuves_sync.db.push import Outcome, PushItem
from smuves_sync.errors import WriteOutcomeUnknown
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.workers.push_batch import BatchResult, PushBatch
from smuves_sync.workers.push_rules import shows, verdict

if TYPE_CHECKING:
    from smuves_sync.workers.push import PushJob

log = logging.getLogger(__name__)

HELD = "the draft has other edits"
# The parts of a row that publishing carries over, compared between draft and published.
_ROW_KEYS = ("path", "name")


async def publish_tables(
    push: PushJob, client: HubSpotClient, batch: PushBatch, written: Mapping[str, PushItem]
) -> None:
    """Verify, publish (or hold) and read back each table the push wrote rows to."""
    writer = client.writer()
    tables: dict[str, dict[str, PushItem]] = {}
    for hubspot_id, item in written.items():
        tables.setdefault(hubspot_id.rpartition(":")[0], {})[hubspot_id] = item
    for table_id, items in tables.items():
        result = BatchResult()
        draft, published = await writer.table_draft_rows(table_id)
        verified: dict[str, PushItem] = {}
        for hubspot_id, item in items.items():
            row = draft.get(hubspot_id.rpartition(":")[2])
            if row is not None and shows(row, item.fields):
                verified[hubspot_id] = item
            else:
                result.outcomes.append(Outcome(hubspot_id, *_failed(item, row)))
        if _other_edits(table_id, draft, published, verified):
            log.info("portal %s: HubDB table %s: %s; held", push.job.portal_id, table_id, HELD)
            result.outcomes += [Outcome(h, "held", HELD) for h in verified]
        elif verified:
            try:
                await writer.publish_table(table_id)
            except WriteOutcomeUnknown as lost:
                log.warning("table %s: %s; deciding by reading back", table_id, lost)
            back = await batch.read_published(list(verified))
            for hubspot_id, item in verified.items():
                record = back.get(hubspot_id)
                decided = verdict(item, record.raw if record else None, None)
                result.outcomes.append(Outcome(hubspot_id, decided.action, decided.reason))
                if decided.action == "applied" and record is not None:
                    result.records.append(record)
        await push.settle(result, push.row_intents)


def _failed(item: PushItem, row: Mapping[str, Any] | None) -> tuple[str, str]:
    decided = verdict(item, row, None)
    return decided.action, decided.reason or "HubSpot's draft does not show the new values"


def _other_edits(
    table_id: str,
    draft: Mapping[str, Any],
    published: Mapping[str, Any],
    ours: Mapping[str, PushItem],
) -> bool:
    """Whether publishing the table would carry anything but our rows' changed fields."""
    mine = {h.rpartition(":")[2]: set(item.fields) for h, item in ours.items()}
    for row_id in draft.keys() | published.keys():
        differing = _differing(draft.get(row_id), published.get(row_id))
        if not differing:
            continue
        if row_id not in mine or not differing <= mine[row_id]:
            return True
    return False


def _differing(draft: Any, published: Any) -> set[str]:
    """The fields (`values.<column>`, `path`, `name`) in which a draft row and its published
    row differ; a row on one side only differs in everything (`*`)."""
    if not isinstance(draft, Mapping) or not isinstance(published, Mapping):
        return {"*"} if draft is not published else set()
    out = {key for key in _ROW_KEYS if draft.get(key) != published.get(key)}
    ours, theirs = draft.get("values") or {}, published.get("values") or {}
    if isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        out |= {f"values.{k}" for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k)}
    return out
