"""Start fetch and export runs: one run, one job per content type, deduplicated race-free.

    started = await start_fetch(db, portal_id)                      # every content type
    started = await start_fetch(db, portal_id, [ContentType.BLOG_POST], owner_id=user)
    started.run, started.jobs, started.skipped    # skipped: type -> run already fetching it
    export = await start_export(db, portal_id, ContentType.SITE_PAGE, ExportFormat.CSV)

Dedup is the database's: the partial unique index on in-flight jobs (portal, kind, type)
lets exactly one of any number of concurrent requests insert a type's job. A request whose
every type is in flight raises `AllDuplicateJobs` naming the runs that hold them, and leaves
nothing behind (its run is rolled back). A partial overlap creates only the new types.

Everything happens in one transaction scoped to the portal (`db.for_portal`): on an unscoped
`Database` it is a transaction of its own, inside a scoped one (the scheduler holds a schedule
row lock) a savepoint, so a refusal does not abort the caller's transaction.

Totals are not counted here: counting asks HubSpot, and a portal's token is decrypted only by
a worker holding a live lease on one of its jobs. The fetch job counts its type (limit=1)
before its first page and stores the total on the job.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from smuves_sync.db import Database
from smuves_sync.db.exports import export_create
from smuves_sync.db.jobs import job_enqueue, job_list_in_flight
from smuves_sync.db.portals import portal_get
from smuves_sync.db.runs import run_create
from smuves_sync.errors import (
    AllDuplicateJobs,
    InvalidInput,
    NotFound,
    QueueError,
    UnknownContentType,
)
from smuves_sync.models import ContentType, Export, ExportFormat, Job, JobKind, Run

# How often a type whose in-flight job finished between our insert and our look-up is tried
# again; a third miss in a row means jobs are finishing faster than we can look.
_ENQUEUE_TRIES = 3


@dataclass(frozen=True)
class FetchStarted:
    """A fetch run that was created, its new jobs, and the types another run already holds."""

    run: Run
    jobs: tuple[Job, ...]
    skipped: Mapping[ContentType, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ExportStarted:
    """An export run with its one job and its exports row."""

    run: Run
    job: Job
    export: Export


def parse_content_types(words: Iterable[str]) -> tuple[ContentType, ...]:
    """Content types from words (CLI, API), in the canonical order, without repeats."""
    known = [t.value for t in ContentType]
    wanted: set[ContentType] = set()
    for word in words:
        word = word.strip()
        if not word:
            continue
        if word not in known:
            raise UnknownContentType(word, known)
        wanted.add(ContentType(word))
    if not wanted:
        raise InvalidInput(f"no content type given; known types: {', '.join(known)}")
    return tuple(t for t in ContentType if t in wanted)


def _requested(content_types: Sequence[ContentType] | None) -> tuple[ContentType, ...]:
    if content_types is None:
        return tuple(ContentType)
    # Canonical order: concurrent requests insert jobs in the same order, so none waits on
    # another's uncommitted insert while holding one the other waits for.
    return parse_content_types(str(t) for t in content_types)


async def _require_portal(db: Database, portal_id: int) -> None:
    if portal_id <= 0:
        raise InvalidInput(f"portal id must be a positive number, got {portal_id}")
    if await portal_get(db, portal_id) is None:
        raise NotFound(
            f"portal {portal_id} is not known; add it first with "
            f"`smuves portal add {portal_id} --name NAME`"
        )


async def _enqueue_or_holder(
    db: Database, run: Run, content_type: ContentType, max_attempts: int | None
) -> Job | int:
    """The new job, or the id of the run whose in-flight job of this type blocks it."""
    for _ in range(_ENQUEUE_TRIES):
        job = (
            await job_enqueue(db, run.id, content_type)
            if max_attempts is None
            else await job_enqueue(db, run.id, content_type, max_attempts=max_attempts)
        )
        if job is not None:
            return job
        for holder in await job_list_in_flight(db, run.portal_id, run.kind):
            if holder.content_type is content_type:
                return holder.run_id
        # The blocking job finished in between: the type is free again, try once more.
    raise QueueError(
        f"portal {run.portal_id}: could not enqueue {content_type}: its in-flight job kept "
        "changing; try again"
    )


async def start_fetch(
    db: Database,
    portal_id: int,
    content_types: Sequence[ContentType] | None = None,
    *,
    owner_id: uuid.UUID | None = None,
    max_attempts: int | None = None,
) -> FetchStarted:
    """Create a fetch run of `portal_id` with one pending job per type not already in flight.

    Raises `AllDuplicateJobs` when every requested type is in flight, `NotFound` for a portal
    that does not exist (or is not visible), `UnknownContentType` / `InvalidInput` for bad types.
    """
    types = _requested(content_types)
    async with db.for_portal(portal_id) as scoped:
        await _require_portal(scoped, portal_id)
        run = await run_create(scoped, portal_id, JobKind.FETCH, types, owner_id=owner_id)
        jobs: list[Job] = []
        skipped: dict[ContentType, int] = {}
        for content_type in types:
            found = await _enqueue_or_holder(scoped, run, content_type, max_attempts)
            if isinstance(found, Job):
                jobs.append(found)
            else:
                skipped[content_type] = found
        if not jobs:
            # Raised inside the transaction: the empty run is rolled back with it.
            raise AllDuplicateJobs(portal_id, list(skipped.values()))
    return FetchStarted(run=run, jobs=tuple(jobs), skipped=skipped)


async def start_export(
    db: Database,
    portal_id: int,
    content_type: ContentType,
    export_format: ExportFormat,
    *,
    owner_id: uuid.UUID | None = None,
    path: Path | None = None,
    max_attempts: int | None = None,
) -> ExportStarted:
    """Create an export run of one content type: its job and its exports row.

    `path` is where the worker writes the file (None: a file under SMUVES_EXPORT_DIR).
    Raises `AllDuplicateJobs` when an export of that type is already in flight.
    """
    (content_type,) = _requested([content_type])
    export_format = ExportFormat(export_format)
    async with db.for_portal(portal_id) as scoped:
        await _require_portal(scoped, portal_id)
        run = await run_create(scoped, portal_id, JobKind.EXPORT, [content_type], owner_id=owner_id)
        found = await _enqueue_or_holder(scoped, run, content_type, max_attempts)
        if not isinstance(found, Job):
            raise AllDuplicateJobs(portal_id, [found])
        export = await export_create(
            scoped,
            run.id,
            portal_id,
            content_type,
            export_format,
            str(path.expanduser().resolve()) if path is not None else None,
        )
    return ExportStarted(run=run, job=found, export=export)
