"""The incremental read of a fetch job: what changed since the last fetch, then deletions.

1. The changes (`hubspot.changes.changed_pages`): each pass, live then archived, newest first,
   which also gives HubSpot's count of the pass; stored page by page as a full listing's pages
   are (one transaction with the job's checkpoint, ids recorded as seen).
2. Deletions without re-reading everything: the objects stored as live (archived) are counted
   against HubSpot's count of the pass. Only when they differ are the pass's ids listed (ids
   only), the ids not stored read by id and stored, and the stored objects the ids listing did
   not show confirmed with HubSpot as the deletion sweep does (`sweep.finish_fetch`): marked
   deleted only when HubSpot answers that it holds them no more.
3. HubDB rows: the tables are listed (one request); a table's rows are read whole when its
   `updatedAt` moved since then, or its `rowCount` differs from the rows stored, and swept; the
   rows of a table no longer listed are swept too (a table gone takes its rows with it).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.fetch_seen import (
    PresentCounts,
    content_children_present,
    content_present_counts,
    content_seen_add,
    content_seen_unstored,
)
from smuves_sync.hubspot.changes import changed_pages, listed_ids, parent_states
from smuves_sync.hubspot.client import BATCH_READ_SIZE, HubSpotClient, Page
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.sweep import SweepScope, finish_fetch, store_read

log = logging.getLogger(__name__)


def _since_ms(read: FetchRead) -> int:
    assert read.since is not None
    return round(read.since.timestamp() * 1000)


async def _store(
    ctx: JobContext, job: Job, page: Page, processed: int, cursor: str | None
) -> tuple[Job, int]:
    """Store a page and checkpoint the job in one transaction: (job, rows written)."""
    async with ctx.db.for_job(job, async_commit=True) as scoped:
        written = await store_read(scoped, job, page.items, page.rejects)
        job = await ctx.queue(scoped).checkpoint(job, cursor, processed)
    return job, written


async def read_changes(ctx: JobContext, client: HubSpotClient, job: Job, read: FetchRead) -> Job:
    """Read what changed of a flat type, then confirm deletions; completes the job."""
    job, changed, counted = await _read_pages(ctx, client, job, read)
    async with ctx.db.for_job(job) as scoped:
        stored = await content_present_counts(scoped, job.portal_id, job.content_type)
    job, found, scopes = await _check_counts(ctx, client, job, stored, counted)
    return await finish_fetch(
        ctx, client, job, scopes=scopes, changed=changed + found, incremental=True
    )


async def _read_pages(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    read: FetchRead,
    parent_id: str | None = None,
) -> tuple[Job, int, dict[bool, int]]:
    """Store the changed objects page by page: (job, rows written, HubSpot's count per pass).
    A parent's children are not checkpointed page by page (their job resumes per parent)."""
    processed, changed = job.processed, 0
    counted: dict[bool, int] = {}
    cursor = job.cursor if parent_id is None else None
    pages = changed_pages(client, job.content_type, _since_ms(read), cursor, parent_id=parent_id)
    async for page in pages:
        processed += page.objects
        if page.counted is not None:
            counted[page.archived] = page.counted
        after = page.cursor if parent_id is None else job.cursor
        job, written = await _store(ctx, job, page, processed, after)
        changed += written
    return job, changed, counted


async def _check_counts(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    stored: PresentCounts,
    counted: dict[bool, int],
    parent_id: str | None = None,
) -> tuple[Job, int, list[SweepScope]]:
    """Compare what is stored as live (archived) with HubSpot's count of the pass; where they
    differ, list the pass's ids, store what was not stored: (job, rows written, what to
    sweep)."""
    spec = client.spec(job.content_type)
    changed, scopes = 0, []
    prefix = f"{parent_id}:" if parent_id is not None else None
    for archived in (False, True) if spec.archived_pass else (False,):
        held = counted.get(archived)
        if held is None and parent_id is None:  # resumed after this pass: counted again
            held = await client.count(job.content_type, archived=archived)
        mine = stored.archived if archived else stored.live
        if mine == held:  # a parent's children uncounted (held None): listed
            continue
        log.info(
            "job %s: %s%s stores %d %s objects, HubSpot counts %d: listing their ids",
            job.id,
            job.content_type,
            "" if parent_id is None else f" of {parent_id}",
            mine,
            "archived" if archived else "live",
            held,
        )
        ids = listed_ids(client, job.content_type, archived=archived, parent_id=parent_id)
        job = await _see_ids(ctx, job, ids)
        changed += await _store_unstored(ctx, client, job)
        scopes.append(SweepScope(archived=archived, prefix=prefix))
    return job, changed, scopes


async def _see_ids(ctx: JobContext, job: Job, pages: AsyncIterator[list[str]]) -> Job:
    """Record every id of an ids-only listing as seen by the job."""
    async for ids in pages:
        async with ctx.db.for_job(job) as scoped:
            await content_seen_add(scoped, job.id, job.portal_id, ids)
            job = await ctx.queue(scoped).heartbeat(job)
    return job


async def _store_unstored(ctx: JobContext, client: HubSpotClient, job: Job) -> int:
    """Read by id and store what an ids listing showed that is not stored: rows written."""
    after, written = "", 0
    while True:
        async with ctx.db.for_job(job) as scoped:
            ids = await content_seen_unstored(scoped, job, after=after, limit=BATCH_READ_SIZE)
        if not ids:
            return written
        after = ids[-1]
        answer = await client.confirm(job.content_type, ids)
        async with ctx.db.for_job(job) as scoped:
            written += await store_read(scoped, job, answer.present, answer.rejects)


async def read_changed_children(
    ctx: JobContext, client: HubSpotClient, job: Job, read: FetchRead
) -> Job:
    """Read the changed children (HubDB rows) of the parents that changed, confirm deletions
    per parent; completes the job."""
    spec = client.spec(job.content_type)
    since = _since_ms(read)
    states = await parent_states(client, job.content_type)
    async with ctx.db.for_job(job) as scoped:
        stored = await content_children_present(scoped, job.portal_id, job.content_type)
    none = PresentCounts(0, 0)
    todo = [
        s.hubspot_id
        for s in states
        if s.updated_ms is None
        or s.updated_ms > since
        or stored.get(s.hubspot_id, none).live != s.child_count
    ]
    done_up_to = Cursor.decode(job.cursor, spec.name).parent if job.cursor else None
    changed, scopes = 0, []
    for parent_id in todo:
        if done_up_to is not None and _key(parent_id) <= _key(done_up_to):
            continue
        job, written, counted = await _read_pages(ctx, client, job, read, parent_id)
        async with ctx.db.for_job(job) as scoped:
            held = await content_children_present(scoped, job.portal_id, job.content_type)
        job, found, swept = await _check_counts(
            ctx, client, job, held.get(parent_id, none), counted, parent_id
        )
        changed += written + found
        scopes += swept
        after = Cursor(spec.name, parent=parent_id, parent_done=True).encode()
        job, _ = await _store(ctx, job, Page((), after), job.processed, after)
    gone = sorted(stored.keys() - {s.hubspot_id for s in states})
    if todo or gone:
        log.info(
            "job %s: %s of %d changed table(s) read, of %d gone swept",
            job.id,
            job.content_type,
            len(todo),
            len(gone),
        )
    scopes += [SweepScope(prefix=f"{parent_id}:") for parent_id in gone]
    return await finish_fetch(ctx, client, job, scopes=scopes, changed=changed, incremental=True)


def _key(object_id: str) -> tuple[int, int, str]:
    return (0, int(object_id), "") if object_id.isdigit() else (1, 0, object_id)
