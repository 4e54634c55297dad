"""A row factory for tests: plants users, portals, runs and jobs in any state and at any time.

    f = Factory(admin_pool)
    user = await f.user()
    portal = await f.portal(owner=user)
    run = await f.run(portal, kind=JobKind.FETCH, status=RunStatus.RUNNING)
    job = await f.job(run, status=JobStatus.RUNNING, locked_at=now - timedelta(minutes=6))

It writes through the login (superuser/owner) role, so row-level security does not stand in
the way; read back through the role under test.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from psycopg.types.json import Jsonb

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get
from smuves_sync.db.pool import Pool
from smuves_sync.db.runs import run_get
from smuves_sync.models import (
    ContentType,
    ExportFormat,
    Job,
    JobKind,
    JobStatus,
    Run,
    RunStatus,
)
from tests.support.sql import query
from tests.support.timing import T0

ALL_TYPES = tuple(ContentType)
R = TypeVar("R")

_JOB_RECORD = Job(
    id=1, run_id=1, portal_id=1, kind=JobKind.FETCH, content_type=ContentType.SITE_PAGE,
    status=JobStatus.PENDING, attempts=0, max_attempts=3, run_after=T0,
    locked_at=None, locked_by=None, lease_token=None, heartbeat_at=None, total=None,
    processed=0, cursor=None, last_error=None, created_at=T0, finished_at=None,
)  # fmt: skip


def job_record(**columns: Any) -> Job:
    """A `Job` in memory only, for code that reads one: a pending site_page fetch of run 1
    and portal 1, due and created at T0, with `columns` over that."""
    return replace(_JOB_RECORD, **columns)


def _found(record: R | None) -> R:
    assert record is not None
    return record


class Factory:
    """Plants rows; every argument has a sensible default."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.db = Database(pool)
        self._numbers = itertools.count(1)
        self._leases: dict[int, Job] = {}

    async def user(self, email: str | None = None) -> uuid.UUID:
        """A new app user; returns its id."""
        email = email or f"user{next(self._numbers)}-{uuid.uuid4().hex[:8]}@example.com"
        rows = await query(self.pool, "seed_user", email=email)
        return uuid.UUID(str(rows[0]["id"]))

    async def portal(
        self,
        owner: uuid.UUID | None = None,
        *,
        portal_id: int | None = None,
        name: str = "",
        token_encrypted: bytes | None = None,
        members: Sequence[uuid.UUID] = (),
        time_zone: str = "UTC",
    ) -> int:
        """A portal owned by `owner` (a new user when None); returns its id."""
        owner = owner or await self.user()
        portal_id = portal_id or 1_000_000 + next(self._numbers)
        await query(
            self.pool,
            "plant_portal",
            portal_id=portal_id,
            name=name or f"portal {portal_id}",
            owner_id=owner,
            token_encrypted=token_encrypted,
            time_zone=time_zone,
        )
        for member in members:
            await self.member(portal_id, member)
        return portal_id

    async def _plant(self, statement: str, **params: Any) -> int:
        """Run one `plant_*` statement; the id of the row it wrote."""
        rows = await query(self.pool, statement, **params)
        return int(rows[0]["id"])

    async def member(self, portal_id: int, user_id: uuid.UUID, role: str = "viewer") -> None:
        """Make `user_id` a member of `portal_id`."""
        await query(self.pool, "plant_member", portal_id=portal_id, user_id=user_id, role=role)

    async def run(
        self,
        portal_id: int | None = None,
        *,
        owner: uuid.UUID | None = None,
        kind: JobKind = JobKind.FETCH,
        status: RunStatus = RunStatus.PENDING,
        content_types: Sequence[ContentType] = ALL_TYPES,
        created_at: datetime | None = None,
        started_at: datetime | None = None,
        finished_at: datetime | None = None,
        full_read: bool = False,
    ) -> Run:
        """A run of `portal_id` (a new portal when None); `full_read`: a fetch asked to read
        every type in full."""
        portal_id = portal_id or await self.portal(owner)
        row_id = await self._plant(
            "plant_run",
            portal_id=portal_id,
            owner_id=owner,
            kind=str(kind),
            status=str(status),
            content_types=[str(t) for t in content_types],
            created_at=created_at,
            started_at=started_at,
            finished_at=finished_at,
            full_read=full_read,
        )
        return _found(await run_get(self.db, row_id))

    async def job(
        self,
        run: Run | None = None,
        *,
        content_type: ContentType = ContentType.SITE_PAGE,
        status: JobStatus = JobStatus.PENDING,
        attempts: int = 0,
        max_attempts: int = 3,
        run_after: datetime | None = None,
        locked_at: datetime | None = None,
        locked_by: str | None = None,
        lease_token: uuid.UUID | None = None,
        heartbeat_at: datetime | None = None,
        total: int | None = None,
        processed: int = 0,
        cursor: str | None = None,
        last_error: str | None = None,
        last_error_public: str | None = None,
        idempotency_key: str | None = None,
        created_at: datetime | None = None,
        finished_at: datetime | None = None,
    ) -> Job:
        """A job of `run` (a new fetch run when None). A running job gets a lease: locked at
        `locked_at` (default now), heartbeat at `heartbeat_at` (default `locked_at`)."""
        run = run or await self.run()
        if status is JobStatus.RUNNING:
            lease_token = lease_token or uuid.uuid4()
            locked_by = locked_by or "factory"
        row_id = await self._plant(
            "plant_job",
            run_id=run.id,
            portal_id=run.portal_id,
            kind=str(run.kind),
            content_type=str(content_type),
            status=str(status),
            attempts=attempts,
            max_attempts=max_attempts,
            run_after=run_after,
            locked_at=locked_at,
            locked_by=locked_by,
            lease_token=lease_token,
            heartbeat_at=heartbeat_at or locked_at,
            total=total,
            processed=processed,
            cursor=cursor,
            last_error=last_error,
            last_error_public=last_error_public,
            idempotency_key=idempotency_key,
            created_at=created_at,
            finished_at=finished_at,
        )
        return _found(await job_get(self.db, row_id))

    async def lease(self, portal_id: int) -> Job:
        """A live lease on a job of `portal_id`, for `Database.for_job` (worker_holds_lease): the
        worker role writes and reads the portal's content under it. The job is an export's,
        so that no fetch of the portal is in flight (content history attributes versions to
        that one), and its heartbeat is dated a day ahead: it does not expire mid-test. One
        per portal."""
        if portal_id not in self._leases:
            run = await self.run(portal_id, kind=JobKind.EXPORT, content_types=[ALL_TYPES[0]])
            ahead = datetime.now(UTC) + timedelta(days=1)
            self._leases[portal_id] = await self.job(
                run, content_type=ALL_TYPES[0], status=JobStatus.RUNNING, heartbeat_at=ahead
            )
        return self._leases[portal_id]

    async def failed_job(self, run: Run | None = None, **columns: Any) -> Job:
        """A fetch job that failed for good mid-listing: 3 attempts of 3, checkpointed at
        'page-7' after 700 objects (`columns` over that, as `job` takes them)."""
        planted = {"attempts": 3, "cursor": "page-7", "processed": 700, **columns}
        return await self.job(run, status=JobStatus.FAILED, **planted)

    async def backlog(
        self,
        portals: int,
        *,
        kind: JobKind = JobKind.FETCH,
        content_types: Sequence[ContentType] = ALL_TYPES,
        first_portal: int = 2_000_000,
        owner: uuid.UUID | None = None,
        run_after: datetime | None = None,
    ) -> list[int]:
        """`portals` new portals with one run each and one pending job per content type."""
        owner = owner or await self.user()
        rows = await query(
            self.pool,
            "seed_backlog",
            portals=portals,
            first_portal=first_portal,
            owner_ids=[owner],
            kind=str(kind),
            content_types=[str(t) for t in content_types],
            run_after=run_after,
        )
        return [r["id"] for r in rows]

    async def content_item(
        self,
        run: Run,
        hubspot_id: str | None = None,
        *,
        content_type: ContentType = ContentType.SITE_PAGE,
        name: str = "A page",
        language: str | None = None,
        translated_from_id: str | None = None,
    ) -> str:
        """A content row of the run's portal, first and last seen by `run`."""
        hubspot_id = hubspot_id or str(next(self._numbers))
        await query(
            self.pool,
            "plant_content_item",
            portal_id=run.portal_id,
            content_type=str(content_type),
            hubspot_id=hubspot_id,
            name=name,
            data=Jsonb({"id": hubspot_id, "name": name}),
            content_hash=f"hash-{hubspot_id}",
            run_id=run.id,
            language=language,
            translated_from_id=translated_from_id,
        )
        return hubspot_id

    async def content_sync(
        self, run: Run, *, content_type: ContentType = ContentType.SITE_PAGE, job_id: int = 0
    ) -> None:
        """The portal's type last confirmed by `run` (a content_syncs row), now."""
        await query(
            self.pool,
            "plant_content_sync",
            portal_id=run.portal_id,
            content_type=str(content_type),
            run_id=run.id,
            job_id=job_id,
        )

    async def fetch_read(
        self,
        job: Job,
        *,
        mode: str = "full",
        reason: str = "planted",
        since: datetime | None = None,
    ) -> None:
        """How fetch job `job` reads its type (a fetch_reads row), its listing begun now."""
        await query(
            self.pool,
            "plant_fetch_read",
            job_id=job.id,
            run_id=job.run_id,
            portal_id=job.portal_id,
            content_type=str(job.content_type),
            mode=mode,
            reason=reason,
            since=since,
        )

    async def seen(self, job: Job, *hubspot_ids: str) -> None:
        """Ids recorded as seen by fetch job `job` (fetch_seen rows)."""
        await query(
            self.pool,
            "plant_fetch_seen",
            job_id=job.id,
            portal_id=job.portal_id,
            hubspot_ids=list(hubspot_ids),
        )

    async def content_rows(
        self, run: Run, n: int, *, content_type: ContentType = ContentType.SITE_PAGE
    ) -> None:
        """`n` content rows of the run's portal, ids '00000001'… ('Page 1'…), every tenth
        archived."""
        await query(
            self.pool,
            "plant_content_rows",
            portal_id=run.portal_id,
            content_type=str(content_type),
            run_id=run.id,
            n=n,
        )

    async def content_reject(
        self,
        run: Run,
        hubspot_id: str | None = None,
        *,
        content_type: ContentType = ContentType.SITE_PAGE,
        reason: str = "object has no usable 'id' (got NoneType)",
    ) -> int:
        """A rejected object of the run's portal, recorded by `run`."""
        return await self._plant(
            "plant_content_reject",
            portal_id=run.portal_id,
            run_id=run.id,
            content_type=str(content_type),
            hubspot_id=hubspot_id,
            reason=reason,
            raw=b'{"name":"no id"}',
        )

    async def export(
        self,
        run: Run,
        *,
        content_type: ContentType = ContentType.SITE_PAGE,
        format: ExportFormat = ExportFormat.CSV,
        status: JobStatus = JobStatus.PENDING,
    ) -> int:
        """An export row of `run`."""
        return await self._plant(
            "plant_export",
            run_id=run.id,
            portal_id=run.portal_id,
            content_type=str(content_type),
            format=str(format),
            status=str(status),
        )

    async def changeset(
        self,
        portal_id: int,
        *items: Mapping[str, Any],
        content_type: ContentType = ContentType.SITE_PAGE,
    ) -> int:
        """A pushed changeset of the portal with `items` (each: hubspot_id, state, fields,
        before, applied_version); returns its id."""
        changeset_id = await self._plant(
            "plant_pushed_changeset", portal_id=portal_id, content_type=str(content_type)
        )
        for item in items:
            await query(
                self.pool,
                "plant_changeset_item",
                changeset_id=changeset_id,
                portal_id=portal_id,
                content_type=str(content_type),
                base_version=item.get("base_version", 1),
                hubspot_id=item["hubspot_id"],
                state=item.get("state", "applied"),
                fields=Jsonb(dict(item.get("fields", {}))),
                before=Jsonb(dict(item.get("before", {}))),
                applied_version=item.get("applied_version"),
            )
        return changeset_id

    async def notification(
        self, user_id: uuid.UUID, run: Run | None = None, *, kind: str = "run_finished"
    ) -> int:
        """A notification for `user_id`."""
        return await self._plant(
            "plant_notification",
            user_id=user_id,
            run_id=run.id if run else None,
            kind=kind,
            message="something happened",
        )

    async def schedule(
        self,
        portal_id: int,
        *,
        owner: uuid.UUID | None = None,
        cron_expression: str = "0 3 * * *",
        content_types: Sequence[ContentType] = ALL_TYPES,
        next_run_at: datetime | None = None,
    ) -> int:
        """A schedule of `portal_id`."""
        return await self._plant(
            "plant_schedule",
            portal_id=portal_id,
            owner_id=owner,
            cron_expression=cron_expression,
            content_types=[str(t) for t in content_types],
            next_run_at=next_run_at,
        )
