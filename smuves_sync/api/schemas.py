"""Request and response bodies of the API (pydantic); responses are read from the package's
records by attribute (``model_validate``), so a body names its fields once. A body that shows a
record's fields (a run, an export, a notification, a content object) takes them from the
record's dataclass (`_record_body`) and names only what it leaves out or adds.

Request bodies refuse unknown fields, so a misspelt field is a 422 naming it rather than a
silently ignored wish. Strings that reach Postgres may not hold NUL characters or lone
surrogates (Postgres text cannot store them): such input is a 422, not a database error.
"""

from __future__ import annotations

import dataclasses
import typing
import uuid
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr, create_model

from smuves_sync.db.content import ContentItem
from smuves_sync.db.fetch_reads import FetchRead
from smuves_sync.db.notifications import Notification
from smuves_sync.db.rejects import NO_REJECTS, RunRejects
from smuves_sync.hubspot.account import token_shape
from smuves_sync.models import ContentEvent, ContentType, Export, Job, JobStatus, Run

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


def token_text(value: SecretStr) -> SecretStr:
    """Refuse what no HubSpot token looks like: anything but visible ASCII (a token travels in
    an HTTP header, where spaces, control characters and other letters have no place)."""
    if not token_shape(value.get_secret_value()):
        raise ValueError("must be a HubSpot private app token: visible ASCII characters only")
    return value


TokenText = Annotated[SecretStr, AfterValidator(token_text)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PortalConnect(_Request):
    """Connect a HubSpot portal: its id, a name, and a private-app token (stored encrypted)."""

    id: int = Field(gt=0, le=MAX_ID, description="HubSpot portal (hub) id")
    name: StorableText = Field(min_length=1, max_length=200)
    token: TokenText = Field(min_length=1, max_length=2000, description="never returned")


class FetchRequest(_Request):
    """Which content types to fetch; omitted or null: every type."""

    content_types: list[ContentType] | None = Field(default=None, min_length=1, max_length=20)
    full: bool = Field(
        default=False,
        description="Read every object, not only what changed since each type's last fetch.",
    )


class _Out(BaseModel):
    """A response body read from a record of the package by attribute (`model_validate`);
    attributes the body does not declare (a lease token, a server path) stay inside."""

    model_config = ConfigDict(from_attributes=True)


def _attributes(record: Any) -> dict[str, Any]:
    return {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}


def _record_body(record: type[Any], *, omit: Collection[str] = (), **fields: Any) -> type[_Out]:
    """A response body with the fields of the record `record` (a dataclass) but `omit`, in
    its order and with its types, so that the body does not list them again; `fields` give
    some of them a `Field` (a description). A body subclasses it, naming `_Out` after it:
    a type checker cannot see a class made at run time, and learns from `_Out` what every
    body has (`model_validate`, …)."""
    hints = typing.get_type_hints(record)
    declared: dict[str, Any] = {
        f.name: (hints[f.name], fields.get(f.name, ...))
        for f in dataclasses.fields(record)
        if f.name not in omit
    }
    name = f"_{record.__name__}Body"
    return create_model(name, __base__=_Out, __module__=__name__, **declared)


class PortalOut(_Out):
    id: int
    name: str
    owner_id: uuid.UUID
    role: str = Field(description="your role in this portal: owner, editor or viewer")
    created_at: datetime
    needs_reconnect: bool = Field(
        description="HubSpot refused the portal's stored token (401): no fetch starts until "
        "the owner reconnects it with a new token (POST /v1/portals), which clears this"
    )
    token_rejected_at: datetime | None = Field(
        description="when HubSpot first refused the stored token; null while it is not known "
        "to be refused"
    )


class PortalList(BaseModel):
    items: list[PortalOut]


# What a job that failed says when nothing was written for its users (jobs.last_error_public).
_FAILED = "failed; the operators have the details"


class JobOut(_Out):
    id: int
    content_type: ContentType
    status: JobStatus
    processed: int
    total: int | None = Field(
        description="what the job goes through: for a fetch read in full, the type's objects "
        "in HubSpot (live and archived), counted as the fetch started or else by the job "
        "before its first page; for a fetch read incrementally, the objects changed since "
        "the type's last fetch, counted by the job's first requests before it stores "
        "anything; for an export, the rows to write. null until counted. Never below "
        "processed; a completed fetch's total is what it processed"
    )
    attempts: int
    max_attempts: int
    last_error: str | None = Field(
        description="what went wrong last: the kind of failure and what to do about it, with "
        "HubSpot's correlationId when HubSpot answered (never the error's own text)"
    )
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, job: Job) -> JobOut:
        """From the jobs record: its users' account of the last error, not the operators'
        (which the API's role may not read: a failed job without a note says it failed)."""
        public = job.last_error_public
        if public is None and (job.last_error is not None or job.status is JobStatus.FAILED):
            public = _FAILED
        return cls.model_validate({**_attributes(job), "last_error": public})


class RejectCountOut(_Out):
    content_type: ContentType
    objects: int = Field(description="objects of this type the run could not store")
    reason: str = Field(description="the commonest reason")
    reasons: int = Field(description="how many different reasons there were")


class RejectsOut(_Out):
    """Objects HubSpot sent that the run could not store (kept aside; the run went on)."""

    objects: int
    message: str | None = Field(
        description='"N objects could not be stored: …", with the reasons; null: none'
    )
    by_type: list[RejectCountOut]


class ReadOut(_Out):
    """How a fetch job read its type, and what it cost."""

    content_type: ContentType
    mode: Literal["full", "incremental"] = Field(
        description="full: every object listed; incremental: only what changed since the "
        "type's last completed fetch (its listing's start less an overlap), then deletions"
    )
    reason: str = Field(description="why this mode, e.g. why a full read")
    since: datetime | None = Field(description="incremental: what changed after this moment")
    requests: int = Field(description="requests made to HubSpot (each attempt)")
    changed: int = Field(description="objects written: new, changed, archived or back")
    deleted: int = Field(description="objects HubSpot confirmed gone")
    unchanged: int = Field(description="objects read or confirmed that had not changed")
    deletions: dict[str, int] = Field(
        description="requests spent finding deletions, by way taken: archived pass, count "
        "windows (counts over creation-time windows: purges), full read (a pass's ids, or all)"
    )


class RunOut(_record_body(Run, omit={"owner_id"}), _Out):  # type: ignore[misc]
    # The runs record (but its owner), with its jobs and what its fetches did.
    jobs: list[JobOut]
    rejected: RejectsOut
    reads: list[ReadOut] = Field(
        default_factory=list,
        description="a fetch: how each type was read (full or incremental) and what it cost, "
        "once its job has started listing",
    )

    @classmethod
    def of(
        cls,
        run: Run,
        jobs: Iterable[Job],
        rejects: RunRejects = NO_REJECTS,
        reads: Iterable[FetchRead] = (),
    ) -> RunOut:
        """From the run, its jobs, what it could not store and how its fetches read."""
        rejected = {"objects": rejects.objects, "message": rejects.note, "by_type": rejects.by_type}
        outs = [JobOut.of(j) for j in jobs]
        read_outs = [ReadOut.model_validate(r) for r in reads]
        return cls.model_validate(
            {**_attributes(run), "jobs": outs, "rejected": rejected, "reads": read_outs}
        )


class SkippedType(BaseModel):
    content_type: ContentType
    run_id: int = Field(description="the run already fetching this type")


class _RunAccepted(BaseModel):
    run: RunOut


class FetchAccepted(_RunAccepted):
    skipped: list[SkippedType]
    totals: dict[ContentType, int | None] = Field(
        description="each new job's type: its objects in HubSpot (live and archived), counted "
        "with limit=1 requests as the fetch started; null when HubSpot did not count it in "
        "time (slow, rate limited or failing): the job counts it before its first page; null "
        "too for a type read incrementally (only what changed since its last fetch): its job "
        "counts the changes with its first requests, before it stores anything (poll the run "
        "for the jobs' totals)"
    )


class ExportOut(_record_body(Export, omit={"path"}), _Out):  # type: ignore[misc]
    # The exports record (but the file's place on the server), with its download link.
    download_url: str | None = Field(description="set once the file is written")

    @classmethod
    def of(cls, export: Export) -> ExportOut:
        """From the exports record, with where to download the file once it is written."""
        ready = export.status is JobStatus.COMPLETED
        url = f"/v1/exports/{export.id}/download" if ready else None
        return cls.model_validate({**_attributes(export), "download_url": url})


class ExportAccepted(_RunAccepted):
    export: ExportOut


class TranslationOut(
    _record_body(  # type: ignore[misc]
        ContentItem,
        # the content record as a language variant: without its type, sync time and document
        omit={"content_type", "synced_at", "data"},
        translated_from_id=Field(description="the group's primary; null: this is it"),
    ),
    _Out,
):
    """A language variant of an object: of the same type and language group."""


class _Typed(_Out):
    content_type: ContentType


class ContentItemOut(TranslationOut, _Typed):
    # A translation's fields, its type first (pydantic orders fields from the last base).
    translated_from_id: str | None = Field(
        description="the primary object of its language group; null for a primary"
    )
    synced_at: datetime = Field(
        description="when a sync last confirmed the object as shown: the last completed fetch "
        "of its type, which saw (or had HubSpot confirm) every object of it, or the moment a "
        "later fetch wrote this object, whichever is later"
    )
    data: Any = Field(description="the object as HubSpot returned it")
    translations: list[TranslationOut] | None = Field(
        default=None,
        description="with=translations: the other live members of its language group, "
        "primary first (an empty list: it has none); null when not asked for",
    )


class ContentPageOut(BaseModel):
    items: list[ContentItemOut]
    next: str | None = Field(description="pass as `after` for the next page; null: last page")


class VersionOut(_Out):
    """One version of an object: what began it, its document's hash, the runs it held for."""

    version: int
    event: ContentEvent = Field(description="what began this version")
    hash: str | None = Field(description="the content hash of its document")
    seen_from_run: int | None = Field(description="the run that stored it (null: no fetch)")
    seen_until_run: int | None = Field(description="the run that replaced it")
    recorded_at: datetime
    superseded_at: datetime | None = Field(description="null while it is the current version")
    current: bool


class VersionPageOut(BaseModel):
    items: list[VersionOut]
    next: int | None = Field(description="pass as `after` for the next page; null: last page")


class VersionDocumentOut(VersionOut):
    content_type: ContentType
    hubspot_id: str
    document: Any = Field(description="the object as HubSpot returned it in this version")


class FieldChangeOut(_Out):
    """One field that differs between the two versions."""

    path: str = Field(examples=["$.widgets.title.body.html"], description="its JSON path")
    kind: Literal["added", "removed", "changed"]
    old: Any = Field(description="the older value (null when added)")
    new: Any = Field(description="the newer value (null when removed)")
    text_diff: list[str] | None = Field(
        description="long text (HTML bodies): the unified diff's lines, or one line saying "
        "it is too large to show a line diff (with the sizes); null otherwise"
    )


class DiffOut(BaseModel):
    content_type: ContentType
    hubspot_id: str
    from_version: VersionOut | None = Field(
        alias="from", description="null: the diff is from nothing (the first version)"
    )
    to_version: VersionOut = Field(alias="to")
    changes: list[FieldChangeOut]

    model_config = ConfigDict(serialize_by_alias=True)


class ChangeOut(_Out):
    """A version of an object, as an entry of the portal's changes."""

    recorded_at: datetime
    run_id: int | None = Field(description="the run whose fetch made it (null: no fetch)")
    content_type: ContentType
    hubspot_id: str
    version: int
    event: ContentEvent
    name: str | None = Field(description="the object's name now")


class ChangePageOut(BaseModel):
    items: list[ChangeOut]
    next: str | None = Field(description="pass as `after` for the next page; null: last page")


class NotificationOut(
    _record_body(  # type: ignore[misc]
        Notification,
        schedule_id=Field(description="the schedule a schedule_disabled note is about"),
    ),
    _Out,
):
    pass  # the notifications record as it is


class NotificationPageOut(BaseModel):
    items: list[NotificationOut]
    next: int | None = Field(description="pass as `after` for older ones; null: no more")


class Health(BaseModel):
    status: str = Field(examples=["ok"])
    migration: int = Field(description="the latest applied migration version")
