"""One batch of a push (at most 100 items of one type; HubDB rows: of one table): read what
HubSpot holds now, decide each item (`push_rules.plan`), commit the intent, write, read back.

    batch = PushBatch(writer, content_type, draft=..., verify=...)
    result = await batch.run(items, seen, commit_intent)

`draft`: the writes go to the draft (pages and posts with `--publish draft`, HubDB rows
always), and the reads are of the drafts. `verify`: the batch reads its objects back after
writing and decides them (applied, failed); without it (HubDB rows published live) the items
that were written stay `written`, for the table's publication to verify
(`push_tables.publish_tables`). A lost answer (`WriteOutcomeUnknown`) is decided by the read
back: an item showing the new values is applied, one HubSpot left untouched since it was read
is sent again (at most `_ROUNDS` times in all), anything else is a conflict. A whole-batch 400
is split in halves until the input HubSpot refuses is alone, and that one fails with HubSpot's
words.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from smuves_sync.content_fields import ContentRecord
from smuves_sync.db.push import Outcome, PushItem
from smuves_sync.errors import HubSpotBadRequest, WriteOutcomeUnknown
from smuves_sync.hubspot.writes import WriteAnswer, Writer
from smuves_sync.workers.push_rules import Plan, plan, updated_of, verdict

log = logging.getLogger(__name__)

# Sends of one item within a batch: the first, and resends decided by reading back after a
# lost answer. Past them the job's attempt fails (retryable) and the next attempt decides.
_ROUNDS = 3

CommitIntent = Callable[[Mapping[str, str | None]], Awaitable[int]]
MarkIntent = Callable[[int, str], Awaitable[None]]


@dataclass
class BatchResult:
    """What a batch decided: settled outcomes, the live records it read of its objects (to
    store), the items written and not yet verified, and the intents it committed."""

    outcomes: list[Outcome] = field(default_factory=list)
    records: list[ContentRecord] = field(default_factory=list)
    written: dict[str, PushItem] = field(default_factory=dict)
    # when HubSpot dated each written draft (its `updatedAt`), where it said
    written_at: dict[str, str | None] = field(default_factory=dict)
    intents: list[int] = field(default_factory=list)
    requests: int = 0
    rebased: int = 0


class PushBatch:
    """Pushes batches of one type through one portal's writer."""

    def __init__(self, writer: Writer, content_type: str, *, draft: bool, verify: bool) -> None:
        self._writer = writer
        self._type = content_type
        self._draft = draft
        self._verify = verify

    async def read(self, ids: Sequence[str]) -> dict[str, ContentRecord]:
        """The objects as HubSpot holds them now: their drafts when the push writes drafts."""
        if not ids:
            return {}
        if self._draft:
            return await self._writer.read_drafts(self._type, ids)
        return await self._writer.read(self._type, ids)

    async def read_published(self, ids: Sequence[str]) -> dict[str, ContentRecord]:
        """The objects as published (live), whatever the push writes."""
        return await self._writer.read(self._type, ids) if ids else {}

    async def run(
        self,
        items: Sequence[PushItem],
        seen: Mapping[str, str | None] | None,
        commit_intent: CommitIntent,
        mark_intent: MarkIntent,
    ) -> BatchResult:
        """Push `items`. `seen`: for items of an open intent, HubSpot's `updated` as read
        before that write (they are decided by reading back, never resent blindly)."""
        result = BatchResult()
        todo = {item.hubspot_id: item for item in items}
        last_seen: Mapping[str, str | None] | None = seen
        for _ in range(_ROUNDS):
            now = await self.read(list(todo))
            changes, before_write = self._planned(result, todo, now, last_seen)
            if not changes:
                return result
            intent = await commit_intent(before_write)
            result.intents.append(intent)
            answer, lost = await self._write(changes)
            if not lost:
                await mark_intent(intent, "sent")
            written = {h: todo[h] for h in changes}
            if not self._verify and not lost:
                self._unverified(result, written, answer)
                return result
            back = await self.read(list(written))
            todo = {}
            for hubspot_id, item in written.items():
                record = back.get(hubspot_id)
                raw = record.raw if record is not None else None
                if lost:
                    decided = plan(item, raw, before_write[hubspot_id])
                    if decided.action == "write":
                        todo[hubspot_id] = item  # untouched since: safe to send again
                        continue
                else:
                    decided = verdict(item, raw, _refusal(answer, hubspot_id))
                self._settle(result, item, decided, record)
            if not todo:
                return result
            last_seen = {h: before_write[h] for h in todo}
        raise WriteOutcomeUnknown(
            f"{len(todo)} {self._type} write(s) kept losing their answers; "
            "the next attempt reads them back",
            content_type=self._type,
        )

    def _planned(
        self,
        result: BatchResult,
        todo: Mapping[str, PushItem],
        now: Mapping[str, ContentRecord],
        last_seen: Mapping[str, str | None] | None,
    ) -> tuple[dict[str, Mapping[str, Any]], dict[str, str | None]]:
        """Decide each item by what HubSpot shows `now`: the bodies to write with HubSpot's
        `updated` of each as read; the others settled into `result`."""
        changes: dict[str, Mapping[str, Any]] = {}
        before_write: dict[str, str | None] = {}
        for hubspot_id, item in todo.items():
            record = now.get(hubspot_id)
            raw = record.raw if record is not None else None
            was: str | bool | None = False
            if last_seen is not None and hubspot_id in last_seen:
                was = last_seen[hubspot_id]
            decided = plan(item, raw, was)
            if decided.action == "write":
                assert decided.body is not None and raw is not None
                changes[hubspot_id] = decided.body
                before_write[hubspot_id] = updated_of(raw)
                result.rebased += decided.rebased
            else:
                self._settle(result, item, decided, record)
        return changes, before_write

    def _settle(
        self, result: BatchResult, item: PushItem, decided: Plan, record: ContentRecord | None
    ) -> None:
        if decided.action == "applied" and not self._verify:
            result.written[item.hubspot_id] = item  # shown in the draft: the table decides
            result.written_at[item.hubspot_id] = updated_of(record.raw) if record else None
            return
        result.outcomes.append(Outcome(item.hubspot_id, decided.action, decided.reason))
        if record is not None and not self._draft:
            # Stored as HubSpot shows it now, whatever became of the item: a person's edit
            # that made a conflict too.
            result.records.append(record)

    def _unverified(
        self, result: BatchResult, written: Mapping[str, PushItem], answer: WriteAnswer
    ) -> None:
        for hubspot_id, item in written.items():
            refused = answer.failed.get(hubspot_id)
            if refused is not None:
                result.outcomes.append(Outcome(hubspot_id, "failed", refused))
            else:
                result.written[hubspot_id] = item
                shown = answer.objects.get(hubspot_id)
                result.written_at[hubspot_id] = updated_of(shown) if shown else None

    async def _write(self, changes: Mapping[str, Mapping[str, Any]]) -> tuple[WriteAnswer, bool]:
        """Send the changes, splitting on a whole-batch 400; (answer, whether one was lost)."""
        try:
            if self._draft:
                return await self._writer.update_drafts(self._type, changes), False
            return await self._writer.update(self._type, changes), False
        except WriteOutcomeUnknown as lost:
            log.warning("%s: %s; deciding by reading back", self._type, lost)
            return WriteAnswer(), True
        except HubSpotBadRequest as refused:
            if len(changes) == 1:
                (only,) = changes
                return WriteAnswer(failed={only: _words(refused)}), False
            ids = list(changes)
            half = len(ids) // 2
            first, lost_a = await self._write({h: changes[h] for h in ids[:half]})
            second, lost_b = await self._write({h: changes[h] for h in ids[half:]})
            return first.merged(second), lost_a or lost_b


def _refusal(answer: WriteAnswer, hubspot_id: str) -> str | None:
    """HubSpot's reason for refusing an input: its own, or an error that named no input."""
    found = answer.failed.get(hubspot_id)
    if found is None and answer.unplaced:
        return answer.unplaced[0]
    return found


def _words(error: HubSpotBadRequest) -> str:
    text = str(error)
    return text if len(text) <= 300 else text[:297] + "..."
