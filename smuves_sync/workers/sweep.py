"""What a fetch job saw, and the deletion sweep that ends it.

A fetch marks deleted only what HubSpot says is gone, never what its listing merely did not
show: HubSpot's cursors are offsets, so an object deleted while a listing runs moves another
one, still live, across a page boundary, and the listing never shows that one.

1. `prepare_seen`, before the first page: the ids each page shows are recorded per job, in
   the page's transaction (`fetch_seen`, an unlogged table: 0006_sync_runs.sql), so a job
   resumed by another worker after a crash still knows what the pages before the crash saw.
   A listing that starts from the beginning forgets what an earlier attempt saw and sets the
   job's marker; a resumed job whose marker is gone (Postgres crashed, which empties unlogged
   tables, or the job had failed or been stopped, which drops its ids, before an operator
   requeued it) cannot know, and lists again from the start.
2. The listing itself checks that it is whole (`HubSpotClient.pages(verify=True)`): a second
   pass completes one that saw fewer objects than HubSpot counts at its end, or whose totals
   moved while it ran.
3. `finish_fetch`: the objects stored as present that the job did not see are asked about
   by id, 100 at a time (`HubSpotClient.confirm`): what HubSpot still holds is stored as it
   is now (live, or archived), through the same checks as a listed page (what cannot be
   stored or read goes to content_rejects); what it says it does not hold is marked deleted;
   what a type offers no way to ask about is left as it is. An incremental read sweeps only
   where its counts showed something missing (`SweepScope`: the live or archived objects, of
   one HubDB table). Then, in one transaction, the type's last confirmation (`content_syncs`),
   what the job cost and found (`fetch_reads`) and the job's completion, which also drops its
   ids. The job's total becomes what it saw or confirmed, so its bar ends full however
   HubSpot's count moved while it ran.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from smuves_sync.content_fields import ContentRecord, RejectedObject
from smuves_sync.db import Database
from smuves_sync.db.content import content_upsert_page
from smuves_sync.db.fetch_reads import fetch_read_add
from smuves_sync.db.fetch_seen import (
    fetch_seen_count,
    fetch_seen_intact,
    fetch_seen_mark_deleted,
    fetch_seen_start,
    fetch_seen_sync_confirm,
    fetch_seen_unseen,
)
from smuves_sync.hubspot.client import BATCH_READ_SIZE, HubSpotClient
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext

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


async def finish_fetch(
    ctx: JobContext,
    client: HubSpotClient,
    job: Job,
    *,
    scopes: Sequence[SweepScope] = (SweepScope(),),
    changed: int = 0,
) -> Job:
    """Confirm with HubSpot what the listing did not see (in `scopes`: an incremental read
    sweeps only where its counts differed), mark the gone deleted, record the type's
    confirmation, what the job cost and found (`changed`: rows its pages wrote), and complete
    the job with the objects it saw or confirmed as its processed and its total; returns the
    completed job."""
    portal_id, content_type = job.portal_id, job.content_type
    deleted = stored = unknown = 0
    for scope in scopes:
        job, found = await _sweep(ctx, client, job, scope)
        deleted, stored, unknown = deleted + found[0], stored + found[1], unknown + found[2]
    if unknown:
        unasked = f"{unknown} {content_type} objects were not listed and cannot be asked about"
        log.warning("job %s: %s by id; left as they are", job.id, unasked)
    async with ctx.db.for_job(job) as scoped:
        seen = await fetch_seen_count(scoped, job.id)
        await fetch_seen_sync_confirm(
            scoped,
            portal_id,
            content_type,
            run_id=job.run_id,
            job_id=job.id,
            seen=seen,
            deleted=deleted,
        )
        changed += stored
        await fetch_read_add(
            scoped,
            job.id,
            requests=client.requests,
            changed=changed,
            deleted=deleted,
            unchanged=max(seen - changed, 0),
        )
        if job.total != seen:  # HubSpot's count moved while it ran: the bar ends at all
            job = await ctx.queue(scoped).checkpoint(job, job.cursor, seen, total=seen)
        job = await ctx.queue(scoped).complete(job, processed=seen)
    log.info(
        "job %s: %s of portal %s done, %d objects, %d changed, %d marked deleted, %d requests",
        job.id,
        content_type,
        portal_id,
        seen,
        changed,
        deleted,
        client.requests,
    )
    return job


async def store_read(
    scoped: Database,
    job: Job,
    records: Sequence[ContentRecord],
    rejects: Sequence[RejectedObject],
) -> int:
    """Store what fetch job `job` read, as seen by it (what cannot be stored is set aside in
    content_rejects); the rows written."""
    return await content_upsert_page(
        scoped,
        job.portal_id,
        job.content_type,
        job.run_id,
        records,
        rejected=rejects,
        seen_by=job.id,
    )


async def _sweep(
    ctx: JobContext, client: HubSpotClient, job: Job, scope: SweepScope
) -> tuple[Job, tuple[int, int, int]]:
    """Ask HubSpot about the unseen objects of `scope`: (deleted, stored, unknown)."""
    portal_id, content_type = job.portal_id, job.content_type
    after = ""
    deleted = stored = unknown = 0
    while True:
        async with ctx.db.for_job(job) as scoped:
            unseen = await fetch_seen_unseen(
                scoped,
                job,
                after=after,
                limit=BATCH_READ_SIZE,
                archived=scope.archived,
                prefix=scope.prefix,
            )
        if not unseen:
            break
        after = unseen[-1]
        answer = await client.confirm(content_type, unseen)
        async with ctx.db.for_job(job) as scoped:
            job = await ctx.queue(scoped).heartbeat(job)
            # Through the same checks as a listed page: what cannot be stored is set aside
            # in content_rejects (with what HubSpot answered in a shape that cannot be read),
            # never marked deleted, and never the sweep's failure.
            stored += await store_read(scoped, job, answer.present, answer.rejects)
            deleted += await fetch_seen_mark_deleted(
                scoped, portal_id, content_type, job.run_id, answer.gone
            )
        unknown += len(answer.unknown)
        if answer.present:
            log.info(
                "job %s: %d %s objects the listing missed are still in HubSpot; stored",
                job.id,
                len(answer.present),
                content_type,
            )
    return job, (deleted, stored, unknown)
