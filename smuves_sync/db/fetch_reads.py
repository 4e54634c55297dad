"""fetch_reads: how each fetch job reads its type (full or incremental, why, from when) and what
it cost (fetch_reads.sql; the fetch_reads table). Which way a job reads is decided in
`workers.reads`, from what these queries return.

    basis = await fetch_read_basis(scoped, portal_id, content_type, run_id)
    read = await fetch_read_start(scoped, job, mode="incremental", reason="…", since=moment)
    await fetch_read_add(scoped, job.id, requests=3, changed=2, unchanged=40)
    reads = await fetch_reads_of_run(db, run_id)          # the run summary, per type
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from psycopg.types.json import Jsonb

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job

ReadMode = Literal["full", "incremental"]


@dataclass(frozen=True, slots=True)
class ReadBasis:
    """What decides how a fetch job reads its type."""

    full_read: bool  # its run asked for a full read
    listing_started_at: datetime | None  # the type's last completed fetch began listing then
    last_full_listing_at: datetime | None
    now: datetime  # the database's clock


@dataclass(frozen=True, slots=True)
class DeletionCosts:
    """The requests a fetch job spent finding what HubSpot no longer holds, by the way it was
    found: the archived pass of an incremental read, count windows, full reads (a pass's ids
    listed and swept, or the type read in full)."""

    archived_pass: int = 0
    count_windows: int = 0
    full_read: int = 0


NO_COSTS = DeletionCosts()

# How deletions are found, as the run summary names the ways.
DELETION_WAYS = ("archived pass", "count windows", "full read")


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
    archived_pass_requests: int = 0
    count_window_requests: int = 0
    full_read_requests: int = 0

    @property
    def deletions(self) -> dict[str, int]:
        """How deletions were found, each way with the requests it took (the ways taken)."""
        costs = (self.archived_pass_requests, self.count_window_requests, self.full_read_requests)
        return {way: spent for way, spent in zip(DELETION_WAYS, costs, strict=True) if spent}

    @property
    def deletions_found_by(self) -> str:
        """The ways deletions were looked for, with their requests ("count windows 9, …");
        "counts" when the counts matched and nothing more was asked."""
        costs = self.deletions
        return ", ".join(f"{way} {spent:,}" for way, spent in costs.items()) or "counts"


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


@dataclass(frozen=True, slots=True)
class RunParents:
    """A run's fetch job of a parent type (HubDB tables): its status, when its listing began
    and what it kept of every live parent (`fetch_read_parents_keep`; None: nothing kept)."""

    status: str
    listing_started_at: datetime | None
    states: list[dict[str, Any]] | None
    now: datetime  # the database's clock


async def fetch_read_parents_keep(db: Database, job_id: int, states: list[dict[str, Any]]) -> None:
    """Keep what job `job_id`'s listing showed of every live parent of its type."""
    await db.execute("fetch_read_parents_keep", {"job_id": job_id, "states": Jsonb(states)})


async def fetch_read_run_parents(
    db: Database, run_id: int, portal_id: int, content_type: str
) -> RunParents | None:
    """Run `run_id`'s fetch job of `content_type` (a parent type), if it has one."""
    params = {"run_id": run_id, "portal_id": portal_id, "content_type": content_type}
    return await db.one("fetch_read_run_parents", params, row=model_row(RunParents))


async def fetch_read_began_by(db: Database, job_id: int, at: datetime) -> None:
    """Take job `job_id`'s listing to have begun no later than `at`: what it reads was listed
    then, so the next fetch reads what changed since."""
    await db.execute("fetch_read_began_by", {"job_id": job_id, "at": at})


async def fetch_read_add(
    db: Database,
    job_id: int,
    *,
    requests: int = 0,
    changed: int = 0,
    deleted: int = 0,
    unchanged: int = 0,
    costs: DeletionCosts = NO_COSTS,
) -> None:
    """Add to what job `job_id` cost and found (`costs`: how it looked for deletions)."""
    params = {
        "job_id": job_id,
        "requests": requests,
        "changed": changed,
        "deleted": deleted,
        "unchanged": unchanged,
        "archived_pass": costs.archived_pass,
        "count_windows": costs.count_windows,
        "full_read": costs.full_read,
    }
    await db.execute("fetch_read_add", params)


async def fetch_reads_of_run(db: Database, run_id: int) -> list[FetchRead]:
    """How each fetch job of run `run_id` read its type (as visible to the caller)."""
    return await db.all("fetch_reads_of_run", {"run_id": run_id}, row=model_row(FetchRead))


@dataclass(frozen=True, slots=True)
class TypeBasis:
    """What decides how a fetch of one type started now would read it (no run asked yet)."""

    content_type: ContentType
    listing_started_at: datetime | None
    last_full_listing_at: datetime | None
    now: datetime


async def fetch_read_bases(
    db: Database, portal_id: int, content_types: Sequence[ContentType]
) -> list[TypeBasis]:
    """Each type's last completed fetch and the database's clock, for a fetch started now."""
    params = {"portal_id": portal_id, "content_types": [str(t) for t in content_types]}
    return await db.all("fetch_read_bases", params, row=model_row(TypeBasis))
