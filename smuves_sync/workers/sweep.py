"""What a fetch job saw, and the deletion sweep that ends it.

A fetch marks deleted only what HubSpot says is gone, never what its listing merely did not
show: HubSpot's cursors are offsets, so an object deleted while a listing runs moves another
one, still live, across a page boundary, and the listing never shows that one.

1. `prepare_seen`, before the first page: the ids each page shows are recorded per job, in
   the page's transaction (the unlogged table `fetch_seen`), so a job
   resumed by another worker after a crash still knows what the pages before the crash saw.
   A listing that starts from the beginning forgets what an earlier attempt saw and sets the
   job's marker; a resumed job whose marker is gone (Postgres crashed, which empties unlogged
   tables, or the job had failed or been stopped, which drops its ids, before an operator
   requeued it) cannot know, and lists again from the start.
2. The listing itself checks that it is whole (`HubSpotClient.pages(verify=True)`): a second
   pass completes one that saw fewer objects than HubSpot counts at its end, or whose totals
   moved while it ran.
3. `sweep_and_finish`, the end of every read strategy (`finish_fetch` for a job taken as it
   is): the objects stored as present that the job did not see are asked about by id, 100 at
   a time (`HubSpotClient.confirm`): what HubSpot still holds is stored as it is now (live,
   or archived), through the same checks as a listed page (what cannot be stored or read
   goes to content_rejects); what it says it does not hold is marked deleted; what a type
   offers no way to ask about is left as it is. An incremental read sweeps only where its
   counts showed something missing (`SweepScope`: the live or archived objects, of one HubDB
   table). Then, in one transaction, the type's last confirmation (`content_syncs`), what
   the job cost and found (`fetch_reads`) and the job's completion, which also drops its ids
   (`PageWriter.finish`). The job's total becomes what it saw or confirmed, so its bar ends
   full however HubSpot's count moved while it ran.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from smuves_sync.db.fetch_reads import DeletionCosts
from smuves_sync.db.fetch_seen import fetch_seen_intact, fetch_seen_start, fetch_seen_unseen
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.page_writer import PageWriter

log = logging.getLogger(__name__)


async def prepare_seen(ctx: JobContext, job: Job) -> Job:
    """Make sure the job's record of what it saw matches its cursor; returns the job, moved
    back to the start of its listing when that record was lost."""
    async with ctx.db.for_job(job) as scoped:
        if job.cursor is not None and await fetch_seen_intact(scoped, job.id):
            return job
        if job.cursor is None:
            job = await ctx.queue(scoped).heartbeat(job)  # fenced like every write of the job
        else:
            log.warning(
                "job %s: what its listing saw before is not recorded (it was dropped when the "
                "job failed or was stopped, or lost when Postgres crashed or failed over): "
                "listing %s of portal %s again from the start",
                job.id,
                job.content_type,
                job.portal_id,
            )
            job = await ctx.queue(scoped).checkpoint(job, None, 0)
        await fetch_seen_start(scoped, job.id, job.portal_id)
    return job


@dataclass(frozen=True, slots=True)
class SweepScope:
    """Which stored objects a sweep asks about: those stored archived (True) or live (False)
    or both (None), with ids that start with `prefix` (the rows of one HubDB table) or all."""

    archived: bool | None = None
    prefix: str | None = None
    # Where HubSpot is asked about them (live False, archived True; None: both): a state whose
    # whole listing the read has seen without them need not be asked again.
    states: tuple[bool, ...] | None = None


@dataclass(frozen=True, slots=True)
class ReadDone:
    """What a read leaves to the sweep that ends it: where to sweep (a full read: every
    stored object; an incremental one: where its counts differed), the rows it wrote and
    marked deleted itself (a sweep it made on the way, `sweep_scope`), and what it spent
    finding deletions (None: a full read, whose every request is)."""

    scopes: tuple[SweepScope, ...] = (SweepScope(),)
    changed: int = 0
    deleted: int = 0
    costs: DeletionCosts | None = None


async def finish_fetch(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    *,
    scopes: Sequence[SweepScope] = (SweepScope(),),
    changed: int = 0,
) -> Job:
    """Confirm with HubSpot what the listing did not see (in `scopes`), mark the gone
    deleted, and finish the job as `sweep_and_finish` does, for a job taken as it is (no
    writer of its own yet); returns the completed job."""
    return await sweep_and_finish(PageWriter(ctx, job), client, ReadDone(tuple(scopes), changed))


async def sweep_and_finish(writer: PageWriter, client: HubSpotClient, done: ReadDone) -> Job:
    """The end of every read: sweep `done.scopes`, then record the type's confirmation, what
    the job cost and found, and complete it; returns the completed job."""
    deleted, stored, unknown = done.deleted, 0, 0
    before = client.requests
    for scope in done.scopes:
        found = await sweep_scope(writer, client, scope)
        deleted, stored, unknown = deleted + found[0], stored + found[1], unknown + found[2]
    if done.costs is None:
        costs = DeletionCosts(full_read=client.requests)
    else:  # an incremental read sweeps only after listing a pass's ids: a full read's way
        costs = replace(done.costs, full_read=done.costs.full_read + client.requests - before)
    job = writer.job
    if unknown:
        unasked = f"{unknown} {job.content_type} objects were not listed and cannot be asked about"
        log.warning("job %s: %s by id; left as they are", job.id, unasked)
    changed = done.changed + stored
    job = await writer.finish(
        requests=client.requests, changed=changed, deleted=deleted, costs=costs
    )
    log.info(
        "job %s: %s of portal %s done, %d objects, %d changed, %d marked deleted, %d requests",
        job.id,
        job.content_type,
        job.portal_id,
        job.processed,
        changed,
        deleted,
        client.requests,
    )
    return job


async def sweep_scope(
    writer: PageWriter, client: HubSpotClient, scope: SweepScope
) -> tuple[int, int, int]:
    """Ask HubSpot about the unseen objects of `scope`, store what it holds and mark deleted
    what it holds no more: (deleted, stored, unknown)."""
    content_type = writer.job.content_type
    after = ""
    deleted = stored = unknown = 0
    while True:
        async with writer.reading() as scoped:
            unseen = await fetch_seen_unseen(
                scoped,
                writer.job,
                after=after,
                limit=BATCH_READ_SIZE,
                archived=scope.archived,
                prefix=scope.prefix,
            )
        if not unseen:
            break
        after = unseen[-1]
        answer = await client.confirm(content_type, unseen, states=scope.states)
        written, gone = await writer.confirmed(answer)
        stored, deleted = stored + written, deleted + gone
        unknown += len(answer.unknown)
        if answer.present:
            log.info(
                "job %s: %d %s objects the listing missed are still in HubSpot; stored",
                writer.job.id,
                len(answer.present),
                content_type,
            )
    return deleted, stored, unknown
