"""Start fetch and export runs: one run, one job per content type, deduplicated race-free.

    started = await start_fetch(db, portal_id)                      # every content type
    started = await start_fetch(db, portal_id, [ContentType.BLOG_POST], owner_id=user)
    started.run, started.jobs, started.skipped    # skipped: type -> run already fetching it
    export = await start_export(db, portal_id, ContentType.SITE_PAGE, ExportFormat.CSV)

    counter = TotalsCounter(settings, limits, cipher)     # limits: the process's registry
    plan = await counter.plan(member_db, portal_id, types)  # in a member's session (API)
    totals = await counter.count(plan)                       # no transaction open: HubSpot
    started = await start_fetch(db, portal_id, types, totals=totals)

Dedup is the database's: the partial unique index on in-flight jobs (portal, kind, type)
lets exactly one of any number of concurrent requests insert a type's job. A request whose
every type is in flight raises `AllDuplicateJobs` naming the runs that hold them, and leaves
nothing behind (its run is rolled back). A partial overlap creates only the new types.

Who may start what is the database's to say: jobs are made only by the SQL function
enqueue_job, which lets the API add them to its user's portals, a worker only to the fetch
of a due schedule (`schedule_id`), and the operator's login anything. A refusal is
`DatabaseRefused` (a `NotPermitted`). The jobs' priority (`JobPriority`) places them in the
claims' line: a person's run first (the default), a schedule's last.

Everything happens in one transaction scoped to the portal (`db.for_portal`): on an unscoped
`Database` it is a transaction of its own, inside a scoped one (the scheduler holds a schedule
row lock) a savepoint, so a refusal does not abort the caller's transaction.

Totals up front: before a fetch's run and jobs are created, `TotalsCounter` counts the types
that would get a job (``limit=1`` requests, live and archived, the types at once) so that the
jobs are born with their totals: the API's 202 carries them and `smuves sync` draws its bars
with them before any worker has claimed a job. It needs the portal's token, which the database
hands out only to a member of the portal (the API's session, `Database.as_user`) or to the
operator (the login role: `smuves sync`): portal_token_for_member, portal_token_for_operator.
Fetches that schedules start are not counted here (the worker's role gets no token without a
lease), nor are the types a fetch will read incrementally: their jobs count what changed with
the requests their read starts with (workers/incremental.py). Counting never stands in the way
of a start: a type HubSpot does not count within ``SMUVES_COUNT_TIMEOUT_SECONDS`` (slow,
429, 5xx, down, no token) gets its job without a total, and the fetch job counts it before its
first page, as it always has. The requests go through the process's `RateLimitRegistry`: the
same per-portal budget as the fetches of that process.

A token HubSpot refuses (401) is asked once: the first type's live count goes alone, and only
when HubSpot accepts the token do the other counts follow (hubspot/totals.py). A 401 raises
`PortalNeedsReconnect`; the caller marks the portal (`portal_mark_token_refused`, in the
session the plan was read in) and the start is refused, nothing created. While a portal is
marked (a fetch's job got a 401 too: workers/failures.py), `plan` and `start_fetch` refuse it
the same way before anything is asked of HubSpot; reconnecting it with a new token clears it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from smuves_sync.content_edits import export_fields
from smuves_sync.db import Database
from smuves_sync.db.exports import export_create
from smuves_sync.db.jobs import job_enqueue, job_list_in_flight
from smuves_sync.db.portals import (
    portal_needs_reconnect,
    portal_token_for_member,
    portal_token_for_operator,
)
from smuves_sync.db.runs import run_create
from smuves_sync.errors import (
    AllDuplicateJobs,
    ConfigurationError,
    InvalidInput,
    NotFound,
    PortalNeedsReconnect,
    QueueError,
    UnknownContentType,
)
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.totals import count_totals
from smuves_sync.models import ContentType, Export, ExportFormat, Job, JobKind, JobPriority, Run
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.reads import incremental_types

log = logging.getLogger(__name__)

# How often a type whose in-flight job finished between our insert and our look-up is tried
# again; a third miss in a row means jobs are finishing faster than we can look.
_ENQUEUE_TRIES = 3
# A job's attempts when the caller does not say (DESIGN §4).
_DEFAULT_ATTEMPTS = 3


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


@dataclass(frozen=True)
class CountPlan:
    """What a fetch started now would count: the types no in-flight job holds, with the
    portal's token as stored (encrypted; None when it has none or the caller may not have it)."""

    portal_id: int
    content_types: tuple[ContentType, ...]
    sealed_token: bytes | None = field(default=None, repr=False)


class TotalsCounter:
    """Counts a portal's types when a fetch starts, so its jobs are created with their totals.

    `limits` is the process's registry of per-portal budgets (one per process and event loop):
    the counts wait for room in the same budget as the fetches this process runs.
    """

    def __init__(self, settings: Settings, limits: RateLimitRegistry, cipher: TokenCipher) -> None:
        self.settings = settings
        self.limits = limits
        self.cipher = cipher

    @property
    def enabled(self) -> bool:
        """False when ``SMUVES_COUNT_TIMEOUT_SECONDS`` is 0: jobs count for themselves."""
        return self.settings.count_timeout_seconds > 0

    async def plan(
        self,
        db: Database,
        portal_id: int,
        content_types: Sequence[ContentType] | None = None,
        *,
        operator: bool = False,
        full: bool = False,
    ) -> CountPlan:
        """What to count, read in `db`: the session of a member of the portal (the API's,
        `Database.as_user`) or, with `operator`, of the login role (`smuves sync`). The
        database refuses the token to anyone else (portal_token_for_member,
        portal_token_for_operator); the plan then has none.
        A type the fetch will read incrementally (unless `full`) is not counted: its job reads
        only what changed, and counts that with its own first requests, before it stores
        anything (workers/incremental.py); counting it here would ask HubSpot twice."""
        types = _requested(content_types)
        if not self.enabled or portal_id <= 0:
            return CountPlan(portal_id, ())
        async with db.for_portal(portal_id) as scoped:
            if await portal_needs_reconnect(scoped, portal_id):
                raise PortalNeedsReconnect(portal_id)
            held = await job_list_in_flight(scoped, portal_id, JobKind.FETCH)
            todo = tuple(t for t in types if t not in {j.content_type for j in held})
            if not todo:
                # Every type is in flight: the start is refused without asking HubSpot.
                return CountPlan(portal_id, ())
            changes = await incremental_types(scoped, portal_id, todo, self.settings, full=full)
            todo = tuple(t for t in todo if t not in changes)
            if not todo:
                return CountPlan(portal_id, ())
            read = portal_token_for_operator if operator else portal_token_for_member
            return CountPlan(portal_id, todo, await read(scoped, portal_id))

    async def count(self, plan: CountPlan) -> dict[ContentType, int]:
        """Each planned type's total (live plus archived objects), the types concurrently
        once the first count has shown that HubSpot accepts the token.

        Call it with no transaction open: it waits on HubSpot. A 401 to the first count raises
        `PortalNeedsReconnect` (mark the portal: `db.portals.portal_mark_token_refused`).
        Otherwise it never raises for HubSpot's sake: a type whose count fails (429, 5xx, 403,
        a malformed answer) or is not done within ``SMUVES_COUNT_TIMEOUT_SECONDS`` is left
        out, and its job counts it (hubspot/totals.py).
        """
        if not plan.content_types or plan.sealed_token is None or not self.enabled:
            return {}
        try:
            token = self.cipher.decrypt(plan.sealed_token)
        except ConfigurationError as unreadable:  # sealed under a key no longer configured
            log.warning("portal %s: not counted at the start: %s", plan.portal_id, unreadable)
            return {}
        async with HubSpotClient(plan.portal_id, token, self.settings, self.limits) as client:
            return await count_totals(
                client,
                plan.content_types,
                timeout=self.settings.count_timeout_seconds,
                portal_id=plan.portal_id,
            )


async def _require_portal(db: Database, portal_id: int, *, fetch: bool = False) -> None:
    if portal_id <= 0:
        raise InvalidInput(f"portal id must be a positive number, got {portal_id}")
    needs_reconnect = await portal_needs_reconnect(db, portal_id)
    if needs_reconnect is None:
        raise NotFound(
            f"portal {portal_id} is not known; add it first with "
            f"`smuves portal add {portal_id} --name NAME`"
        )
    if fetch and needs_reconnect:
        raise PortalNeedsReconnect(portal_id)


async def enqueue_or_holder(
    db: Database,
    run: Run,
    content_type: ContentType,
    max_attempts: int | None,
    priority: JobPriority,
    total: int | None = None,
    schedule_id: int | None = None,
) -> Job | int:
    """The new job, or the id of the run whose in-flight job of this type blocks it."""
    for _ in range(_ENQUEUE_TRIES):
        job = await job_enqueue(
            db,
            run.id,
            content_type,
            priority=priority,
            max_attempts=_DEFAULT_ATTEMPTS if max_attempts is None else max_attempts,
            total=total,
            schedule_id=schedule_id,
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
    totals: Mapping[ContentType, int] | None = None,
    schedule_id: int | None = None,
    full: bool = False,
    priority: JobPriority = JobPriority.INTERACTIVE,
) -> FetchStarted:
    """Create a fetch run of `portal_id` with one pending job per type not already in flight.

    `totals` (from `TotalsCounter.count`) are stored on the new jobs; a type without one gets
    a job without a total, which the job counts itself. `full`: every type is read in full,
    not only what changed since its last fetch (workers/reads.py).
    Raises `AllDuplicateJobs` when every requested type is in flight, `NotFound` for a portal
    that does not exist (or is not visible), `PortalNeedsReconnect` for one whose token HubSpot
    refused, `UnknownContentType` / `InvalidInput` for bad types.
    A worker starts only the fetch of the due schedule `schedule_id` (the database refuses it
    any other job). `priority` places the jobs in the claims' line: a person's run is
    INTERACTIVE, a schedule's SCHEDULED.
    """
    totals = totals or {}
    types = _requested(content_types)
    async with db.for_portal(portal_id) as scoped:
        await _require_portal(scoped, portal_id, fetch=True)
        run = await run_create(
            scoped, portal_id, JobKind.FETCH, types, owner_id=owner_id, full_read=full
        )
        jobs: list[Job] = []
        skipped: dict[ContentType, int] = {}
        for content_type in types:
            found = await enqueue_or_holder(
                scoped,
                run,
                content_type,
                max_attempts,
                priority,
                totals.get(content_type),
                schedule_id,
            )
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
    include_deleted: bool = False,
    owner_id: uuid.UUID | None = None,
    max_attempts: int | None = None,
    priority: JobPriority = JobPriority.INTERACTIVE,
    edit: bool = False,
    fields: Sequence[str] | None = None,
) -> ExportStarted:
    """Create an export run of one content type: its job and its exports row.

    The worker writes the file at its one place under SMUVES_EXPORT_DIR
    (`smuves_sync.export_files.export_file_path`), without the objects marked deleted unless
    `include_deleted`. With `edit`, an export for editing (CSV only) of `fields` (None: every
    editable field of the type; `InvalidInput` for a type or field that cannot be edited).
    Raises `AllDuplicateJobs` when an export of that type is already in flight.
    """
    (content_type,) = _requested([content_type])
    export_format = ExportFormat(export_format)
    if edit and export_format is not ExportFormat.CSV:
        raise InvalidInput("an export for editing is a CSV file (--format csv)")
    if edit:
        fields = export_fields(content_type, content_type.spec.editable, fields)
    elif fields is not None:
        raise InvalidInput("fields are chosen only for an export for editing (--edit)")
    async with db.for_portal(portal_id) as scoped:
        await _require_portal(scoped, portal_id)
        run = await run_create(scoped, portal_id, JobKind.EXPORT, [content_type], owner_id=owner_id)
        found = await enqueue_or_holder(scoped, run, content_type, max_attempts, priority)
        if not isinstance(found, Job):
            raise AllDuplicateJobs(portal_id, [found])
        export = await export_create(
            scoped,
            run.id,
            portal_id,
            content_type,
            export_format,
            include_deleted=include_deleted,
            edit=edit,
            fields=fields,
        )
    return ExportStarted(run=run, job=found, export=export)
