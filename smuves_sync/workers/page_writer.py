"""The one writer of a fetch job: every write a read makes, in the job's lease-fenced
transaction (`Database.for_job`), whichever way the type is read.

    writer = PageWriter(ctx, job)
    written = await writer.page(page.items, page.rejects, cursor=page.cursor, processed=n)
    await writer.checkpoint(cursor, total=total)       # nothing stored: a new total, a cursor
    new = await writer.see(ids)                        # an ids-only listing's ids, as seen
    stored, deleted = await writer.confirmed(answer)   # what HubSpot answered by id
    job = await writer.finish(requests=..., changed=..., deleted=...)

`writer.job` is the job as its last fenced write left it (lease, cursor, processed, total);
a write past a lost lease raises `LeaseLost` and rolls back whole. A listed page's COMMIT
does not wait for the WAL flush (`async_commit`): a crash of Postgres loses it with its
checkpoint, and the job reads it again. Nor does `finish`'s, but on the job's last attempt
(`db/jobs.py`, `completion_flushes`): a crash that loses the completion leaves the job running
under a lease no worker holds, and it is run again once that expires.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

from smuves_sync.content_fields import ContentRecord, RejectedObject
from smuves_sync.db import Database
from smuves_sync.db.content import NewPages, content_upsert_page
from smuves_sync.db.fetch_reads import NO_COSTS, DeletionCosts, fetch_read_add
from smuves_sync.db.fetch_seen import (
    PresentCounts,
    fetch_seen_add,
    fetch_seen_count,
    fetch_seen_mark_deleted,
    fetch_seen_present_counts,
    fetch_seen_stored_live,
    fetch_seen_sync_confirm,
)
from smuves_sync.hubspot.confirm import Confirmation
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext

log = logging.getLogger(__name__)


class PageWriter:
    """Stores what one fetch job reads and moves the job along, one transaction a step."""

    def __init__(self, ctx: JobContext, job: Job) -> None:
        self._ctx = ctx
        self.job = job
        # A first sync's pages are new objects, inserted without comparing until one is not.
        self._new_pages = NewPages()

    def reading(self) -> AbstractAsyncContextManager[Database]:
        """A transaction of the job's to read in (what is stored, what to ask about)."""
        return self._ctx.db.for_job(self.job)

    async def present_counts(self) -> PresentCounts:
        """How many objects of the job's portal and type are stored live, and archived."""
        async with self.reading() as scoped:
            return await fetch_seen_present_counts(
                scoped, self.job.portal_id, self.job.content_type
            )

    async def stored_live_among(self, hubspot_ids: list[str]) -> int:
        """How many of these ids the store holds live, of the job's portal and type."""
        async with self.reading() as scoped:
            return len(await fetch_seen_stored_live(scoped, self.job, hubspot_ids))

    async def page(
        self,
        records: Sequence[ContentRecord],
        rejects: Sequence[RejectedObject],
        *,
        cursor: str | None,
        processed: int,
    ) -> int:
        """Store a listed page as seen by the job and checkpoint `cursor` and `processed` with
        it, in one transaction: the rows written."""
        async with self._ctx.db.for_job(self.job, async_commit=True) as scoped:
            written = await self._store(scoped, records, rejects)
            self.job = await self._ctx.queue(scoped).checkpoint(self.job, cursor, processed)
        return written

    async def store(
        self, records: Sequence[ContentRecord], rejects: Sequence[RejectedObject]
    ) -> int:
        """Store objects read by id, as seen by the job, without moving it: the rows written."""
        async with self._ctx.db.for_job(self.job) as scoped:
            return await self._store(scoped, records, rejects)

    async def checkpoint(
        self, cursor: str | None, *, processed: int | None = None, total: int | None = None
    ) -> None:
        """Checkpoint the job between pages, nothing stored (`processed` kept unless given)."""
        processed = self.job.processed if processed is None else processed
        async with self._ctx.db.for_job(self.job) as scoped:
            queue = self._ctx.queue(scoped)
            self.job = await queue.checkpoint(self.job, cursor, processed, total=total)

    async def see(self, ids: Sequence[str]) -> int:
        """Record the ids of an ids-only listing as seen by the job, its progress moved by the
        new ones: how many were new."""
        job = self.job
        async with self._ctx.db.for_job(job) as scoped:
            new = await fetch_seen_add(scoped, job.id, job.portal_id, ids)
            queue = self._ctx.queue(scoped)
            self.job = await queue.checkpoint(job, job.cursor, job.processed + new)
        return new

    async def confirmed(self, answer: Confirmation) -> tuple[int, int]:
        """Store what HubSpot still holds of the objects asked about by id and mark deleted
        what it holds no more, extending the lease: (rows written, rows marked deleted)."""
        job = self.job
        async with self._ctx.db.for_job(job) as scoped:
            self.job = job = await self._ctx.queue(scoped).heartbeat(job)
            # Through the same checks as a listed page: what cannot be stored is set aside
            # in content_rejects (with what HubSpot answered in a shape that cannot be read),
            # never marked deleted, and never the sweep's failure.
            stored = await self._store(scoped, answer.present, answer.rejects)
            deleted = await fetch_seen_mark_deleted(
                scoped, job.portal_id, job.content_type, job.run_id, answer.gone
            )
        return stored, deleted

    async def finish(
        self, *, requests: int, changed: int, deleted: int, costs: DeletionCosts = NO_COSTS
    ) -> Job:
        """In one transaction: the type's last confirmation, what the job cost and found
        (`changed`: rows written; `costs`: how it looked for deletions), and its completion with
        the objects it saw as its processed and its total; returns the completed job."""
        job = self.job
        async with self._ctx.db.for_job(job) as scoped:
            seen = await fetch_seen_count(scoped, job.id)
            await fetch_seen_sync_confirm(
                scoped,
                job.portal_id,
                job.content_type,
                run_id=job.run_id,
                job_id=job.id,
                seen=seen,
                deleted=deleted,
            )
            await fetch_read_add(
                scoped,
                job.id,
                requests=requests,
                changed=changed,
                deleted=deleted,
                unchanged=max(seen - changed, 0),
                costs=costs,
            )
            queue = self._ctx.queue(scoped)
            if job.total != seen:  # HubSpot's count moved while it ran: the bar ends at all
                job = await queue.checkpoint(job, job.cursor, seen, total=seen)
            self.job = job = await queue.complete(job, processed=seen)
        return job

    async def record_requests(self, requests: int) -> None:
        """What a failing job cost HubSpot, added to its read as a completed one's is: the
        summary tells what the attempt asked for, not 0. Best effort: the failure itself is
        what counts."""
        try:
            async with self._ctx.db.for_job(self.job) as scoped:
                await fetch_read_add(scoped, self.job.id, requests=requests)
        except Exception as error:
            log.warning(
                "job %s: its %d HubSpot requests were not recorded (%s)",
                self.job.id,
                requests,
                error,
            )

    async def _store(
        self,
        scoped: Database,
        records: Sequence[ContentRecord],
        rejects: Sequence[RejectedObject],
    ) -> int:
        job = self.job
        return await content_upsert_page(
            scoped,
            job.portal_id,
            job.content_type,
            job.run_id,
            records,
            rejected=rejects,
            seen_by=job.id,
            new_pages=self._new_pages,
        )
