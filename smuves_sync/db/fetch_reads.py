"""fetch_reads: how each fetch job reads its type (full or incremental, why, from when) and what
it cost (fetch_reads.sql, 0017_incremental.sql).

    basis = await fetch_read_basis(scoped, portal_id, content_type, run_id)
    read = await fetch_read_start(scoped, job, mode="incremental", reason="…", since=moment)
    await fetch_read_add(scoped, job.id, requests=3, changed=2, unchanged=40)
    reads = await fetch_reads_of_run(db, run_id)          # the run summary, per type
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job
from smuves_sync.settings import Settings

ReadMode = Literal["full", "incremental"]


@dataclass(frozen=True, slots=True)
class ReadBasis:
    """What decides how a fetch job reads its type."""

    full_read: bool  # its run asked for a full read
    listing_started_at: datetime | None  # the type's last completed fetch began listing then
    last_full_listing_at: datetime | None
    now: datetime  # the database's clock


@dataclass(frozen=True, slots=True)
class FetchRead:
    """How one fetch job reads its type, and what it cost so far."""

    job_id: int
    content_type: ContentType
    mode: ReadMode
    reason: str
    since: datetime | None
    listing_started_at: datetime
    requests: int
    changed: int
    deleted: int
    unchanged: int


def has_change_filters(spec: ContentTypeSpec) -> bool:
    """Whether a type can be read incrementally: by its own filters, or its parent's."""
    if spec.parent is not None:
        return ContentType(spec.parent).spec.change_filters
    return spec.change_filters


def decide(
    spec: ContentTypeSpec, basis: ReadBasis, settings: Settings
) -> tuple[ReadMode, str, datetime | None]:
    """(mode, reason, since) for a listing of `spec`'s type that starts now (see
    workers/reads.py)."""
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


async def fetch_read_basis(
    db: Database, portal_id: int, content_type: ContentType, run_id: int
) -> ReadBasis:
    """The run's full-read request, the type's last completed fetch and the database's clock."""
    params = {"portal_id": portal_id, "content_type": str(content_type), "run_id": run_id}
    return await db.only("fetch_read_basis", params, row=model_row(ReadBasis))


async def fetch_read_start(
    db: Database, job: Job, *, mode: ReadMode, reason: str, since: datetime | None
) -> FetchRead:
    """Record how job `job` reads, its listing starting now; returns the record."""
    params = {
        "job_id": job.id,
        "run_id": job.run_id,
        "portal_id": job.portal_id,
        "content_type": str(job.content_type),
        "mode": mode,
        "reason": reason,
        "since": since,
    }
    return await db.only("fetch_read_start", params, row=model_row(FetchRead))


async def fetch_read_get(db: Database, job_id: int) -> FetchRead | None:
    """How job `job_id` reads, if its listing has started."""
    return await db.one("fetch_read_get", {"job_id": job_id}, row=model_row(FetchRead))


async def fetch_read_add(
    db: Database,
    job_id: int,
    *,
    requests: int = 0,
    changed: int = 0,
    deleted: int = 0,
    unchanged: int = 0,
) -> None:
    """Add to what job `job_id` cost and found."""
    params = {
        "job_id": job_id,
        "requests": requests,
        "changed": changed,
        "deleted": deleted,
        "unchanged": unchanged,
    }
    await db.execute("fetch_read_add", params)


async def fetch_reads_of_run(db: Database, run_id: int) -> list[FetchRead]:
    """How each fetch job of run `run_id` read its type (as visible to the caller)."""
    return await db.all("fetch_reads_of_run", {"run_id": run_id}, row=model_row(FetchRead))


@dataclass(frozen=True, slots=True)
class _TypeBasis:
    content_type: ContentType
    listing_started_at: datetime | None
    last_full_listing_at: datetime | None
    now: datetime


async def fetch_read_incremental_types(
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
    params = {"portal_id": portal_id, "content_types": [str(t) for t in content_types]}
    rows = await db.all("fetch_read_bases", params, row=model_row(_TypeBasis))
    found = set()
    for row in rows:
        basis = ReadBasis(False, row.listing_started_at, row.last_full_listing_at, row.now)
        if decide(row.content_type.spec, basis, settings)[0] == "incremental":
            found.add(row.content_type)
    return found
