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

The job's total is what it will store or confirm, known before its first object is stored:
the first answer of each pass (`open_changes`, asked before anything is stored and then read
as the pass's first page) either holds every change or is followed by one ``limit=1`` count
of the changes. HubDB rows: the rows of the changed tables, each counted as `rowCount` until
its first answer says how many changed. Where counts differ, the pass's ids listing takes the
pass's changes out of the total and all of its objects in. The completion sets the total to
what the job saw (`sweep.finish_fetch`); until then no checkpoint lets progress pass it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.fetch_seen import (
    PresentCounts,
    fetch_seen_add,
    fetch_seen_children_present,
    fetch_seen_present_counts,
    fetch_seen_unstored,
)
from smuves_sync.hubspot.changes import (
    Opening,
    changed_pages,
    listed_ids,
    open_changes,
    parent_states,
)
from smuves_sync.hubspot.client import BATCH_READ_SIZE, HubSpotClient, Page
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.sweep import SweepScope, finish_fetch, store_read

log = logging.getLogger(__name__)


def _since_ms(read: FetchRead) -> int:
    assert read.since is not None
    return round(read.since.timestamp() * 1000)


@dataclass(slots=True)
class _Passes:
    """What a change listing read, as it reads: rows written, and per pass (archived or not)
    HubSpot's count of the pass and the objects it showed."""

    written: int = 0
    counted: dict[bool, int] = field(default_factory=dict)
    shown: dict[bool, int] = field(default_factory=dict)


async def _store(
    ctx: JobContext,
    job: Job,
    page: Page,
    processed: int,
    cursor: str | None,
    total: int | None = None,
) -> tuple[Job, int]:
    """Store a page and checkpoint the job in one transaction (with a new `total` if given):
    (job, rows written)."""
    async with ctx.db.for_job(job, async_commit=True) as scoped:
        written = await store_read(scoped, job, page.items, page.rejects)
        job = await ctx.queue(scoped).checkpoint(job, cursor, processed, total=total)
    return job, written


async def _checkpoint(ctx: JobContext, job: Job, cursor: str | None, total: int) -> Job:
    """Checkpoint the job between pages: its cursor and a new `total`, nothing stored."""
    async with ctx.db.for_job(job) as scoped:
        return await ctx.queue(scoped).checkpoint(job, cursor, job.processed, total=total)


async def read_changes(ctx: JobContext, client: HubSpotClient, job: Job, read: FetchRead) -> Job:
    """Read what changed of a flat type, then confirm deletions; completes the job."""
    opening = None
    if job.cursor is None:  # from the beginning: the total is what changed, known now
        opening = await open_changes(client, job.content_type, _since_ms(read))
        if opening.changed is not None:
            total = job.processed + opening.changed
            job = await _checkpoint(ctx, job, job.cursor, total)
    job, passes = await _read_pages(ctx, client, job, read, opening=opening)
    async with ctx.db.for_job(job) as scoped:
        stored = await fetch_seen_present_counts(scoped, job.portal_id, job.content_type)
    job, found, scopes = await _check_counts(ctx, client, job, stored, passes)
    return await finish_fetch(ctx, client, job, scopes=scopes, changed=passes.written + found)


async def _read_pages(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    read: FetchRead,
    parent_id: str | None = None,
    opening: Opening | None = None,
) -> tuple[Job, _Passes]:
    """Store the changed objects page by page. A parent's children are not checkpointed page
    by page (their job resumes per parent)."""
    processed, passes = job.processed, _Passes()
    cursor = job.cursor if parent_id is None else None
    since = _since_ms(read)
    pages = changed_pages(
        client, job.content_type, since, cursor, parent_id=parent_id, opening=opening
    )
    last: set[str] = set()  # the keyset lists again what shares the last page's oldest time
    async for page in pages:
        ids = {item.hubspot_id for item in page.items}
        new = page.objects - len(ids & last)
        last = ids
        processed += new
        passes.shown[page.archived] = passes.shown.get(page.archived, 0) + new
        if page.counted is not None:
            passes.counted[page.archived] = page.counted
        after = page.cursor if parent_id is None else job.cursor
        job, written = await _store(ctx, job, page, processed, after)
        passes.written += written
    return job, passes


async def _check_counts(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    stored: PresentCounts,
    passes: _Passes,
    parent_id: str | None = None,
) -> tuple[Job, int, list[SweepScope]]:
    """Compare what is stored as live (archived) with HubSpot's count of the pass; where they
    differ, list the pass's ids, store what was not stored: (job, rows written, what to
    sweep)."""
    spec = client.spec(job.content_type)
    changed, scopes = 0, []
    prefix = f"{parent_id}:" if parent_id is not None else None
    for archived in (False, True) if spec.archived_pass else (False,):
        held = passes.counted.get(archived)
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
        if job.total is not None and held is not None:
            # The ids listing shows the whole pass, the changes read among them.
            total = job.total - passes.shown.get(archived, 0) + held
            job = await _checkpoint(ctx, job, job.cursor, total)
        ids = listed_ids(client, job.content_type, archived=archived, parent_id=parent_id)
        job = await _see_ids(ctx, job, ids)
        changed += await _store_unstored(ctx, client, job)
        scopes.append(SweepScope(archived=archived, prefix=prefix))
    return job, changed, scopes


async def _see_ids(ctx: JobContext, job: Job, pages: AsyncIterator[list[str]]) -> Job:
    """Record every id of an ids-only listing as seen by the job (progress: the new ones)."""
    async for ids in pages:
        async with ctx.db.for_job(job) as scoped:
            new = await fetch_seen_add(scoped, job.id, job.portal_id, ids)
            job = await ctx.queue(scoped).checkpoint(job, job.cursor, job.processed + new)
    return job


async def _store_unstored(ctx: JobContext, client: HubSpotClient, job: Job) -> int:
    """Read by id and store what an ids listing showed that is not stored: rows written."""
    after, written = "", 0
    while True:
        async with ctx.db.for_job(job) as scoped:
            ids = await fetch_seen_unstored(scoped, job, after=after, limit=BATCH_READ_SIZE)
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
        stored = await fetch_seen_children_present(scoped, job.portal_id, job.content_type)
    none = PresentCounts(0, 0)
    todo = [
        s
        for s in states
        if s.updated_ms is None
        or s.updated_ms > since
        or stored.get(s.hubspot_id, none).live != s.child_count
    ]
    done_up_to = Cursor.decode(job.cursor, spec.name).parent if job.cursor else None
    left = [s for s in todo if done_up_to is None or _key(s.hubspot_id) > _key(done_up_to)]
    # A changed table's rows count as its rowCount (what the job reads of it at most) until
    # its first answer says how many changed.
    bounds = [s.child_count or 0 for s in left]
    total = job.processed + sum(bounds)
    job = await _checkpoint(ctx, job, job.cursor, total)
    changed, scopes = 0, []
    for at, state in enumerate(left):
        job, written, swept = await _read_child_changes(
            ctx, client, job, read, state.hubspot_id, sum(bounds[at + 1 :])
        )
        changed += written
        scopes += swept
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
    return await finish_fetch(ctx, client, job, scopes=scopes, changed=changed)


async def _read_child_changes(
    ctx: JobContext, client: HubSpotClient, job: Job, read: FetchRead, parent_id: str, later: int
) -> tuple[Job, int, list[SweepScope]]:
    """Read one changed parent's changed children and check its counts (`later`: what the
    parents after it count at most): (job, rows written, what to sweep)."""
    spec = client.spec(job.content_type)
    opening = await open_changes(client, job.content_type, _since_ms(read), parent_id=parent_id)
    if opening.changed is not None:
        total = job.processed + opening.changed + later
        job = await _checkpoint(ctx, job, job.cursor, total)
    job, passes = await _read_pages(ctx, client, job, read, parent_id, opening)
    async with ctx.db.for_job(job) as scoped:
        held = await fetch_seen_children_present(scoped, job.portal_id, job.content_type)
    job, found, swept = await _check_counts(
        ctx, client, job, held.get(parent_id, PresentCounts(0, 0)), passes, parent_id
    )
    after = Cursor(spec.name, parent=parent_id, parent_done=True).encode()
    # The parent is done: what it showed is in the total exactly.
    job = await _checkpoint(ctx, job, after, job.processed + later)
    return job, passes.written + found, swept


def _key(object_id: str) -> tuple[int, int, str]:
    return (0, int(object_id), "") if object_id.isdigit() else (1, 0, object_id)
