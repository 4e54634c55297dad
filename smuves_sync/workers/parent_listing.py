"""The parents (HubDB tables) a child type's incremental read (HubDB rows) reads: what its
run's job of the parent type kept of them, or a listing of its own.

The tables job's first answer, when it holds every live table, is kept (`keep_parents`:
`fetch_reads.parent_states`); the rows job of the same run reads it once that job has
completed (`parents_of`), instead of listing the tables again: an unchanged portal's tables
and rows then cost one request together.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from smuves_sync.db.fetch_reads import (
    RunParents,
    fetch_read_began_by,
    fetch_read_parents_keep,
    fetch_read_run_parents,
)
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.opening import Opening
from smuves_sync.hubspot.parents import ParentState
from smuves_sync.workers.page_writer import PageWriter

log = logging.getLogger(__name__)

# How long a child type's job (HubDB rows) waits for its run's running job of the parent type
# (HubDB tables) to complete, to read the parents that job listed instead of listing them again:
# an unchanged portal's tables job takes one request. Past it the parents are listed.
PARENT_WAIT_SECONDS = 2.0
_PARENT_POLL_SECONDS = 0.05
_PARENTS_FRESH = timedelta(seconds=60)


async def keep_parents(writer: PageWriter, client: HubSpotClient, opening: Opening) -> None:
    """Keep what the opening showed of every live object of a parent type (HubDB tables), when
    it showed them all, for its child type's job of the same run (`parents_of`)."""
    parents = client.listed_parents(writer.job.content_type, opening)
    if parents is None:
        return
    kept = [
        {"id": p.hubspot_id, "updated_ms": p.updated_ms, "child_count": p.child_count}
        for p in parents
    ]
    async with writer.reading() as scoped:
        await fetch_read_parents_keep(scoped, writer.job.id, kept)


async def parents_of(writer: PageWriter, client: HubSpotClient) -> list[ParentState]:
    """The live parents of a child type's job (HubDB tables of rows): those its run's job of
    the parent type kept (`_kept_parents`), the job's listing then taken to have begun when
    that one's did; else listed. A job resumed from a cursor lists them (its listing began as
    recorded), and so does a retried one (a table deleted since would fail it again)."""
    job = writer.job
    parent = client.spec(job.content_type).parent
    if job.cursor is not None or job.attempts > 1 or parent is None:
        return await client.parent_states(job.content_type)
    kept = await _kept_parents(writer, parent)
    if kept is None or kept.states is None or kept.listing_started_at is None:
        return await client.parent_states(job.content_type)
    async with writer.reading() as scoped:
        await fetch_read_began_by(scoped, job.id, kept.listing_started_at)
    log.info("job %s: %s: the tables its run's %s job listed", job.id, job.content_type, parent)
    return [
        ParentState(str(state["id"]), state["updated_ms"], state["child_count"])
        for state in kept.states
    ]


async def _kept_parents(writer: PageWriter, parent: str) -> RunParents | None:
    """The run's job of the parent type, once it has completed (waited for while it runs, at
    most `PARENT_WAIT_SECONDS`), and only when its listing began lately (`_PARENTS_FRESH`: a
    table deleted after it fails the rows job as one deleted between the job's own listing and
    its reading the rows would, so that time is kept short); else None."""
    job = writer.job
    waited = 0.0
    while True:
        async with writer.reading() as scoped:
            found = await fetch_read_run_parents(scoped, job.run_id, job.portal_id, parent)
        if found is None or found.status != "running" or waited >= PARENT_WAIT_SECONDS:
            break
        await asyncio.sleep(_PARENT_POLL_SECONDS)
        waited += _PARENT_POLL_SECONDS
    if found is None or found.status != "completed" or found.listing_started_at is None:
        return None
    return found if found.now - found.listing_started_at <= _PARENTS_FRESH else None
