"""How a fetch job reads its type — in full, or only what changed since the last fetch — and
the read strategy that does it: decided here, and only here, when its listing starts, and
recorded in fetch_reads (a resumed job reads back what it began with).

A type is read incrementally when all of these hold, else in full, for the reason named (the
run summary shows it):

- its spec has change filters (`ContentTypeSpec.change_filters`; HubDB rows: their tables do);
- its run did not ask for a full read (`smuves sync --full`, the API's `"full": true`);
- it has a completed fetch whose listing began at a known moment (`content_syncs`);
- its last full read began less than `SMUVES_FULL_SYNC_EVERY` ago (the database's clock).

The incremental read asks for what changed after the last completed fetch's listing began,
less `SMUVES_INCREMENTAL_OVERLAP_SECONDS`: HubSpot dates an edit by its own clock, and an
edit saved while that listing ran may be dated a little before it began.

Every strategy stores through the job's `PageWriter` and leaves the sweep that ends it to
`sweep.sweep_and_finish` (`ReadDone`): `FullRead`, `ChangesRead`, `ChildChangesRead`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.db import Database
from smuves_sync.db.fetch_reads import (
    FetchRead,
    ReadBasis,
    ReadMode,
    fetch_read_bases,
    fetch_read_basis,
    fetch_read_get,
    fetch_read_start,
)
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.models import ContentType, Job
from smuves_sync.settings import Settings
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.full_read import FullRead
from smuves_sync.workers.incremental import ChangesRead, ChildChangesRead
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.sweep import ReadDone


class ReadStrategy(Protocol):
    """One way of reading a fetch job's type."""

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Store what the read finds through `writer`; what is left to sweep."""
        ...


def strategy(read: FetchRead, spec: ContentTypeSpec) -> ReadStrategy:
    """The strategy of a job that reads as `read` says."""
    if read.mode == "full":
        return FullRead()
    assert read.since is not None
    since_ms = round(read.since.timestamp() * 1000)
    return ChildChangesRead(since_ms) if spec.parent is not None else ChangesRead(since_ms)


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


def has_change_filters(spec: ContentTypeSpec) -> bool:
    """Whether a type can be read incrementally: by its own filters, or its parent's."""
    if spec.parent is not None:
        return ContentType(spec.parent).spec.change_filters
    return spec.change_filters


def decide(
    spec: ContentTypeSpec, basis: ReadBasis, settings: Settings
) -> tuple[ReadMode, str, datetime | None]:
    """(mode, reason, since) for a listing of `spec`'s type that starts now."""
    if not has_change_filters(spec):
        return "full", "HubSpot's listing of this type has no change filters", None
    if basis.full_read:
        return "full", "a full read was asked for", None
    if basis.listing_started_at is None:
        return "full", "no completed fetch to read changes since", None
    last_full = basis.last_full_listing_at
    if last_full is None or basis.now - last_full > settings.full_sync_every:
        return "full", f"the last full read is older than {_days(settings.full_sync_every)}", None
    since = basis.listing_started_at - timedelta(seconds=settings.incremental_overlap_seconds)
    return "incremental", "changes since the last fetch", since


def _days(every: timedelta) -> str:
    days = every.total_seconds() / 86_400
    return f"{days:g} day(s) (SMUVES_FULL_SYNC_EVERY)"


async def incremental_types(
    db: Database,
    portal_id: int,
    content_types: Sequence[ContentType],
    settings: Settings,
    *,
    full: bool = False,
) -> set[ContentType]:
    """Which of `content_types` a fetch of the portal started now would read incrementally."""
    if full:
        return set()
    found = set()
    for row in await fetch_read_bases(db, portal_id, content_types):
        basis = ReadBasis(False, row.listing_started_at, row.last_full_listing_at, row.now)
        if decide(row.content_type.spec, basis, settings)[0] == "incremental":
            found.add(row.content_type)
    return found
