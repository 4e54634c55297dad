"""Plain values shared by every layer: enums for the words the database knows, frozen records."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum, StrEnum

# ContentType lives with its spec in content_types (the one list of types); it is one of the
# words the database knows, so it is re-exported here beside the others.
from smuves_sync.content_types import ContentType as ContentType


class JobKind(StrEnum):
    FETCH = "fetch"
    EXPORT = "export"
    PUSH = "push"


class JobPriority(IntEnum):
    """Claim order between runs (jobs.priority, claim_jobs): higher first."""

    SCHEDULED = 0  # a schedule's fetch
    ADMIN = 10  # an operator's run from the dashboard
    INTERACTIVE = 20  # a person waits for it: the API, `smuves sync`, `smuves export`


class JobStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"

    @property
    def is_terminal(self) -> bool:
        """True once the job will not run again without an operator's requeue."""
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED)


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    PARTIALLY_FAILED = "partially_failed"
    FAILED = "failed"
    STOPPED = "stopped"

    @property
    def is_terminal(self) -> bool:
        """True once reconcile (or a stop) has settled the run."""
        return self not in (RunStatus.PENDING, RunStatus.RUNNING)


class ExportFormat(StrEnum):
    CSV = "csv"
    JSONL = "jsonl"


class ContentEvent(StrEnum):
    """What began a version of a content object (content_versions.event)."""

    CREATED = "created"
    UPDATED = "updated"
    ARCHIVED = "archived"
    UNARCHIVED = "unarchived"
    DELETED = "deleted"
    # seen again after it was marked deleted (or its row was removed)
    RESTORED = "restored"


@dataclass(frozen=True, slots=True)
class Portal:
    id: int
    name: str
    owner_id: uuid.UUID
    created_at: datetime
    token_rejected_at: datetime | None  # HubSpot refused its token (401) then; None: not known

    @property
    def needs_reconnect(self) -> bool:
        """True once HubSpot refused the stored token: no fetch starts until a new one."""
        return self.token_rejected_at is not None


@dataclass(frozen=True, slots=True)
class Run:
    id: int
    portal_id: int
    owner_id: uuid.UUID | None
    kind: JobKind
    status: RunStatus
    content_types: tuple[ContentType, ...]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    run_id: int
    portal_id: int
    kind: JobKind
    content_type: ContentType
    status: JobStatus
    attempts: int
    max_attempts: int
    run_after: datetime
    locked_at: datetime | None
    locked_by: str | None
    lease_token: uuid.UUID | None
    heartbeat_at: datetime | None
    total: int | None
    processed: int
    cursor: str | None
    # For the operators: the error as raised (hosts, paths and all).
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None
    # For the portal's users: what kind of failure, what to do, HubSpot's correlation id.
    last_error_public: str | None = None
    priority: int = JobPriority.SCHEDULED
    # the job's place in line within its priority (None: run_after)
    fair_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Export:
    id: int
    run_id: int
    portal_id: int
    content_type: ContentType
    format: ExportFormat
    status: JobStatus
    # Where an operator's `smuves export --out` copied the file (only the operator's login
    # writes it); None otherwise. Never where a file is written or served from: that place is
    # derived (smuves_sync.export_files.export_file_path).
    path: str | None
    row_count: int | None
    bytes: int | None
    created_at: datetime
    finished_at: datetime | None
    # Whether the file carries the objects marked deleted (gone from HubSpot); by default not.
    include_deleted: bool
    # How many deleted objects the file left out (or, with include_deleted, carries); None
    # until it is written.
    deleted_count: int | None
    # An export made for editing (CSV): its columns are the id, the stored version, HubSpot's
    # updated text and the type's editable fields (`fields`: those named; None: all of them).
    edit: bool = False
    fields: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Schedule:
    id: int
    portal_id: int
    owner_id: uuid.UUID | None
    # Five fields, evaluated in UTC.
    cron_expression: str
    content_types: tuple[ContentType, ...]
    enabled: bool
    # None until first computed; the scheduler fills it in without firing.
    next_run_at: datetime | None
    last_run_at: datetime | None
    created_at: datetime
