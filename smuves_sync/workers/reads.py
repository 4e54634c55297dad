"""How a fetch job reads its type: in full, or only what changed since the last fetch
(decided by `db.fetch_reads.decide` when its listing starts, recorded in fetch_reads).

A type is read incrementally when all of these hold, else in full, for the reason named (the
run summary shows it):

- its spec has change filters (`ContentTypeSpec.change_filters`; HubDB rows: their tables do);
- its run did not ask for a full read (`smuves sync --full`, the API's `"full": true`);
- it has a completed fetch whose listing began at a known moment (`content_syncs`);
- its last full read began less than `SMUVES_FULL_SYNC_EVERY` ago (the database's clock).

The incremental read asks for what changed after the last completed fetch's listing began,
less `SMUVES_INCREMENTAL_OVERLAP_SECONDS`: HubSpot dates an edit by its own clock, and an
edit saved while that listing ran may be dated a little before it began.
"""

from __future__ import annotations

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.db.fetch_reads import (
    FetchRead,
    decide,
    fetch_read_basis,
    fetch_read_get,
    fetch_read_start,
)
from smuves_sync.models import Job
from smuves_sync.workers.context import JobContext


async def start_read(ctx: JobContext, job: Job, spec: ContentTypeSpec) -> FetchRead:
    """How the job reads: decided and recorded when its listing starts from the beginning,
    read back when it resumes (a resumed job without a record reads in full)."""
    async with ctx.db.for_job(job) as scoped:
        if job.cursor is not None:
            found = await fetch_read_get(scoped, job.id)
            if found is not None:
                return found
            return await fetch_read_start(
                scoped, job, mode="full", reason="resumed a listing begun in full", since=None
            )
        basis = await fetch_read_basis(scoped, job.portal_id, job.content_type, job.run_id)
        mode, reason, since = decide(spec, basis, ctx.settings)
        return await fetch_read_start(scoped, job, mode=mode, reason=reason, since=since)
