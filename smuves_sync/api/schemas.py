"""Request and response bodies of the API (pydantic), and their making from the package's records.

Request bodies refuse unknown fields, so a misspelt field is a 422 naming it rather than a
silently ignored wish. Strings that reach Postgres may not hold NUL characters or lone
surrogates (Postgres text cannot store them): such input is a 422, not a database error.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr

from smuves_sync.db.api import ContentItem, Notification, PortalAccess
from smuves_sync.models import (
    ContentType,
    Export,
    ExportFormat,
    Job,
    JobKind,
    JobStatus,
    Run,
    RunStatus,
)

# Ids are bigint columns: anything larger could never name a row.
MAX_ID = 2**63 - 1


def storable_text(value: str) -> str:
    """Refuse text Postgres cannot store (NUL, lone surrogates)."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text") from None
    return value


StorableText = Annotated[str, AfterValidator(storable_text)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PortalConnect(_Request):
    """Connect a HubSpot portal: its id, a name, and a private-app token (stored encrypted)."""

    id: int = Field(gt=0, le=MAX_ID, description="HubSpot portal (hub) id")
    name: StorableText = Field(min_length=1, max_length=200)
    token: SecretStr = Field(min_length=1, max_length=2000, description="never returned")


class FetchRequest(_Request):
    """Which content types to fetch; omitted or null: every type."""

    content_types: list[ContentType] | None = Field(default=None, min_length=1, max_length=20)


class ExportRequest(_Request):
    """One content type, as CSV or JSON Lines."""

    content_type: ContentType
    format: ExportFormat = ExportFormat.CSV


class PortalOut(BaseModel):
    id: int
    name: str
    owner_id: uuid.UUID
    role: str = Field(description="your role in this portal: owner, editor or viewer")
    created_at: datetime

    @classmethod
    def of(cls, portal: PortalAccess) -> PortalOut:
        """From the db record."""
        return cls(
            id=portal.id,
            name=portal.name,
            owner_id=portal.owner_id,
            role=portal.role,
            created_at=portal.created_at,
        )


class PortalList(BaseModel):
    items: list[PortalOut]


class JobOut(BaseModel):
    id: int
    content_type: ContentType
    status: JobStatus
    processed: int
    total: int | None
    attempts: int
    max_attempts: int
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, job: Job) -> JobOut:
        """From the queue's record (lease and cursor stay inside)."""
        return cls(
            id=job.id,
            content_type=job.content_type,
            status=job.status,
            processed=job.processed,
            total=job.total,
            attempts=job.attempts,
            max_attempts=job.max_attempts,
            last_error=job.last_error,
            created_at=job.created_at,
            finished_at=job.finished_at,
        )


class RunOut(BaseModel):
    id: int
    portal_id: int
    kind: JobKind
    status: RunStatus
    content_types: list[ContentType]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    jobs: list[JobOut]

    @classmethod
    def of(cls, run: Run, jobs: list[Job]) -> RunOut:
        """From the run and its jobs."""
        return cls(
            id=run.id,
            portal_id=run.portal_id,
            kind=run.kind,
            status=run.status,
            content_types=list(run.content_types),
            created_at=run.created_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
            jobs=[JobOut.of(j) for j in jobs],
        )


class SkippedType(BaseModel):
    content_type: ContentType
    run_id: int = Field(description="the run already fetching this type")


class FetchAccepted(BaseModel):
    run: RunOut
    skipped: list[SkippedType]


class ExportOut(BaseModel):
    id: int
    run_id: int
    portal_id: int
    content_type: ContentType
    format: ExportFormat
    status: JobStatus
    row_count: int | None
    bytes: int | None
    created_at: datetime
    finished_at: datetime | None
    download_url: str | None = Field(description="set once the file is written")

    @classmethod
    def of(cls, export: Export) -> ExportOut:
        """From the exports record (the server-side path stays inside)."""
        ready = export.status is JobStatus.COMPLETED and export.path is not None
        return cls(
            id=export.id,
            run_id=export.run_id,
            portal_id=export.portal_id,
            content_type=export.content_type,
            format=export.format,
            status=export.status,
            row_count=export.row_count,
            bytes=export.bytes,
            created_at=export.created_at,
            finished_at=export.finished_at,
            download_url=f"/v1/exports/{export.id}/download" if ready else None,
        )


class ExportAccepted(BaseModel):
    run: RunOut
    export: ExportOut


class TranslationOut(BaseModel):
    """A language variant of an object: of the same type and language group."""

    hubspot_id: str
    name: str | None
    slug: str | None
    url: str | None
    state: str | None
    language: str | None
    translated_from_id: str | None = Field(description="the group's primary; null: this is it")
    hubspot_updated_at: datetime | None
    archived: bool

    @classmethod
    def of(cls, item: ContentItem) -> TranslationOut:
        """From the db record."""
        return cls(
            hubspot_id=item.hubspot_id,
            name=item.name,
            slug=item.slug,
            url=item.url,
            state=item.state,
            language=item.language,
            translated_from_id=item.translated_from_id,
            hubspot_updated_at=item.hubspot_updated_at,
            archived=item.archived,
        )


class ContentItemOut(BaseModel):
    content_type: ContentType
    hubspot_id: str
    name: str | None
    slug: str | None
    url: str | None
    state: str | None
    language: str | None
    translated_from_id: str | None = Field(
        description="the primary object of its language group; null for a primary"
    )
    hubspot_updated_at: datetime | None
    archived: bool
    synced_at: datetime
    data: Any = Field(description="the object as HubSpot returned it")
    translations: list[TranslationOut] | None = Field(
        default=None,
        description="with=translations: the other live members of its language group, "
        "primary first (an empty list: it has none); null when not asked for",
    )

    @classmethod
    def of(
        cls, item: ContentItem, translations: Sequence[ContentItem] | None = None
    ) -> ContentItemOut:
        """From the db record (and the records of its language variants, if asked for)."""
        return cls(
            content_type=item.content_type,
            hubspot_id=item.hubspot_id,
            name=item.name,
            slug=item.slug,
            url=item.url,
            state=item.state,
            language=item.language,
            translated_from_id=item.translated_from_id,
            hubspot_updated_at=item.hubspot_updated_at,
            archived=item.archived,
            synced_at=item.synced_at,
            data=item.data,
            translations=None
            if translations is None
            else [TranslationOut.of(t) for t in translations],
        )


class ContentPageOut(BaseModel):
    items: list[ContentItemOut]
    next: str | None = Field(description="pass as `after` for the next page; null: last page")


class NotificationOut(BaseModel):
    id: int
    run_id: int | None
    kind: str
    message: str
    created_at: datetime
    read_at: datetime | None

    @classmethod
    def of(cls, notification: Notification) -> NotificationOut:
        """From the db record."""
        return cls(
            id=notification.id,
            run_id=notification.run_id,
            kind=notification.kind,
            message=notification.message,
            created_at=notification.created_at,
            read_at=notification.read_at,
        )


class NotificationPageOut(BaseModel):
    items: list[NotificationOut]
    next: int | None = Field(description="pass as `after` for older ones; null: no more")


class Health(BaseModel):
    status: str = Field(examples=["ok"])
    migration: int = Field(description="the latest applied migration version")
