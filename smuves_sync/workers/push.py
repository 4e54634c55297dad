"""The push handler: one content type of one changeset, from its pending items to HubSpot.

1. Decrypt the portal's token (the database hands it only to the holder of the job's live
   push lease) and read the job's changeset (the run's) and how it publishes.
2. First the batches whose intent is open — a worker was killed after committing it, or an
   answer was lost — decided by reading the objects back, never sent again blindly; then the
   pending items, 100 at a time in id order (HubDB rows: one table's at a time). Each batch:
   `push_batch.PushBatch` (read now, decide, commit the intent, write, read back).
3. Each batch's outcome is one transaction under the job's lease: the read-back documents of
   the applied objects through the ordinary content upsert (so history records the new
   versions, which `push_versions_attribute` marks as this changeset's), the items' states
   and versions, the intents decided, and the job's fenced checkpoint.
4. HubDB rows are written to their tables' drafts; with `--publish live` each table is then
   published, only if its draft holds no other unpublished edits (else its items are `held`),
   and read back (`push_tables`).

A 429 waits on the portal's one budget (shared with its fetches) and spends no attempt; a
lost lease stops the handler as a fetch's does (`LeaseLost`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence

from smuves_sync.db.content import content_upsert_page
from smuves_sync.db.push import (
    Outcome,
    PushChangeset,
    PushItem,
    push_changeset_of_run,
    push_intent_add,
    push_intent_mark,
    push_intents_open,
    push_items_by_id,
    push_items_count,
    push_items_pending,
    push_items_settle,
    push_versions_attribute,
)
from smuves_sync.errors import NotFound
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.writes import BATCH_WRITE_SIZE, DRAFT_TYPES
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.fetch import portal_token
from smuves_sync.workers.push_batch import BatchResult, PushBatch
from smuves_sync.workers.push_tables import Tables, publish_tables, table_of

log = logging.getLogger(__name__)

# Batches of one push job sent at once: a batch's own time is mostly its two reads and its
# transaction, not HubSpot's budget, which paces them all.
_BATCHES_IN_FLIGHT = 8


class PushJob:
    """The state of one push job as it goes: its fenced job row and what it settled."""

    def __init__(self, ctx: JobContext, job: Job, changeset: PushChangeset) -> None:
        self.ctx = ctx
        self.job = job
        self.changeset = changeset
        self.processed = job.processed
        # The intents of HubDB rows written to drafts: decided when their tables are.
        self.row_intents: list[int] = []

    async def commit_intent(self, seen: Mapping[str, str | None]) -> int:
        """Record, and commit, that a batch of these objects is about to be sent."""
        async with self.ctx.db.for_job(self.job) as scoped:
            return await push_intent_add(scoped, self.job, self.changeset.id, seen)

    async def mark_intent(self, intent_id: int, state: str) -> None:
        """Move an intent on (`sent`)."""
        async with self.ctx.db.for_job(self.job) as scoped:
            await push_intent_mark(scoped, intent_id, state)

    async def settle(self, result: BatchResult, decided_intents: Sequence[int] = ()) -> None:
        """Store the applied objects, settle the items and the intents, checkpoint the job:
        one transaction."""
        job = self.job
        async with self.ctx.db.for_job(job) as scoped:
            versions: dict[str, int] = {}
            if result.records:
                await content_upsert_page(
                    scoped, job.portal_id, job.content_type, job.run_id, result.records
                )
                applied = {o.hubspot_id for o in result.outcomes if o.state == "applied"}
                ids = [r.hubspot_id for r in result.records if r.hubspot_id in applied]
                versions = await push_versions_attribute(scoped, job.content_type, ids)
            outcomes = [
                Outcome(o.hubspot_id, o.state, o.reason, versions.get(o.hubspot_id))
                if o.state == "applied"
                else o
                for o in result.outcomes
            ]
            settled = await push_items_settle(scoped, self.changeset.id, job.content_type, outcomes)
            intents = [*decided_intents, *result.intents]
            if result.written:
                self.row_intents += intents  # decided with their tables
                intents = []
            for intent in intents:
                await push_intent_mark(scoped, intent, "decided")
            self.processed += settled
            queue = self.ctx.queue(scoped)
            self.job = await queue.checkpoint(job, None, self.processed)


class _Step:
    """One batch of a push job, from its items to their settled states."""

    def __init__(
        self,
        push: PushJob,
        batch: PushBatch,
        tables: Tables,
        client: HubSpotClient,
        *,
        rows: bool,
        live: bool,
    ) -> None:
        self.push, self.batch, self.tables, self.client = push, batch, tables, client
        self.rows, self.live = rows, live

    async def run(
        self, found: list[PushItem], seen: Mapping[str, str | None] | None, intent: int | None
    ) -> None:
        """Push the batch `found` (`seen`, `intent`: of an open intent) and settle it."""
        tables, writer = self.tables, self.client.writer()
        items = [i for i in found if i.hubspot_id not in tables.written]
        table = table_of(items[0].hubspot_id) if self.rows and self.live and items else None
        if table is not None and seen is None:
            await tables.check_before(writer, table)
        push = self.push
        result = await self.batch.run(items, seen, push.commit_intent, push.mark_intent)
        if self.rows and not self.live:
            # Written to the tables' drafts, and so done: nothing is published.
            result.outcomes += [Outcome(h, "applied") for h in result.written]
            result.written = {}
        tables.add(result)
        if table is not None and seen is not None:
            # Resumed: the drafts an earlier attempt wrote (just read back) are ours.
            await tables.check_before(writer, table)
        await push.settle(result, [intent] if intent is not None else [])


async def handle_push(ctx: JobContext) -> None:
    """Push the job's type of its changeset's pending items; complete the job."""
    job = ctx.job
    async with ctx.db.for_job(job) as scoped:
        changeset = await push_changeset_of_run(scoped, job.portal_id, job.run_id)
        if changeset is None:
            raise NotFound(f"run {job.run_id} pushes no changeset of portal {job.portal_id}")
        counts = await push_items_count(scoped, changeset.id, job.content_type)
        done = counts.items - counts.pending
        job = await ctx.queue(scoped).checkpoint(job, None, done, total=counts.items)
    token = await portal_token(ctx)
    push = PushJob(ctx, job, changeset)
    async with HubSpotClient(job.portal_id, token, ctx.settings, ctx.limits) as client:
        spec = client.spec(job.content_type)
        rows = spec.parent is not None
        live = changeset.publish == "live"
        draft = rows or (not live and str(job.content_type) in DRAFT_TYPES)
        batch = PushBatch(
            client.writer(), str(job.content_type), draft=draft, verify=not (rows and live)
        )
        tables = Tables()
        step = _Step(push, batch, tables, client, rows=rows, live=live)
        # Batches of pending items go a few at a time (HubDB rows one by one: their tables are
        # checked in order); those of open intents first, each alone, before any pending one
        # is read, so that no item is decided twice.
        try:
            await _run_batches(step, rows)
        except ExceptionGroup as failed:
            # The job fails (or parks, or stops) for what its first batch raised.
            raise failed.exceptions[0] from None
        if tables.written:
            await publish_tables(push, client.writer(), batch, tables)
        log.info(
            "job %s: pushed %s of changeset %s (%s requests)",
            job.id,
            job.content_type,
            changeset.id,
            client.requests,
        )
    async with ctx.db.for_job(push.job) as scoped:
        await ctx.queue(scoped).complete(push.job, processed=push.processed)


async def _run_batches(step: _Step, rows: bool) -> None:
    in_flight = asyncio.Semaphore(1 if rows else _BATCHES_IN_FLIGHT)
    async with asyncio.TaskGroup() as group:
        async for found, seen, intent in _batches(step.push, rows):
            if intent is not None:
                await step.run(found, seen, intent)
                continue
            await in_flight.acquire()
            task = group.create_task(step.run(found, None, None))
            task.add_done_callback(lambda _: in_flight.release())


async def _batches(
    push: PushJob, rows: bool
) -> AsyncIterator[tuple[list[PushItem], Mapping[str, str | None] | None, int | None]]:
    """The batches to push: each open intent's pending items (with what was seen before its
    write), then the pending items in id order, at most 100 (HubDB rows: of one table)."""
    ctx, changeset, content_type = push.ctx, push.changeset, push.job.content_type
    async with ctx.db.for_job(push.job) as scoped:
        intents = await push_intents_open(scoped, changeset.id, content_type)
    for intent in intents:
        async with ctx.db.for_job(push.job) as scoped:
            items = await push_items_by_id(scoped, changeset.id, content_type, intent.hubspot_ids)
        for group in _by_table(items, rows):
            yield group, intent.seen(), intent.id
        if not items:
            yield [], None, intent.id
    after = ""
    while True:
        async with ctx.db.for_job(push.job) as scoped:
            items = await push_items_pending(
                scoped, changeset.id, content_type, after=after, limit=BATCH_WRITE_SIZE
            )
        if not items:
            return
        after = items[-1].hubspot_id
        for group in _by_table(items, rows):
            yield group, None, None


def _by_table(items: Sequence[PushItem], rows: bool) -> list[list[PushItem]]:
    """`items` as one batch, or (HubDB rows) one batch per table."""
    if not rows:
        return [list(items)] if items else []
    groups: dict[str, list[PushItem]] = {}
    for item in items:
        groups.setdefault(item.hubspot_id.rpartition(":")[0], []).append(item)
    return list(groups.values())
