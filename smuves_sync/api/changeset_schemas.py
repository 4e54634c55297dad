"""Request and response bodies of the write-back: the export request (with `edit`), and a
changeset's preview."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from smuves_sync.api.schemas import StorableText
from smuves_sync.changesets import Preview, shown
from smuves_sync.db.changesets import ChangesetItem
from smuves_sync.models import ContentType, ExportFormat


class ExportRequest(BaseModel):
    """One content type, as CSV or JSON Lines; with `edit`, a CSV made for editing."""

    model_config = ConfigDict(extra="forbid")

    content_type: ContentType
    format: ExportFormat = ExportFormat.CSV
    include_deleted: bool = Field(default=False, description="keep objects gone from HubSpot")
    edit: bool = Field(
        default=False,
        description="an export for editing (CSV): hubspot_id, _version, _updated, then one "
        "column per editable field of the type, which POST …/changesets reads back exactly",
    )
    fields: list[StorableText] | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="with edit: only these editable fields (HubDB cells: values.<column>); "
        "default: every editable field",
    )


class ChangesetItemOut(BaseModel):
    """One object of a changeset: the fields it changes (new values, and `before`, the base
    version's), its state and why."""

    content_type: ContentType
    hubspot_id: str
    base_version: int | None
    fields: dict[str, Any]
    before: dict[str, Any]
    state: str = Field(description="pending, unchanged, invalid, applied, conflict, failed, held")
    reason: str | None
    warnings: list[str]

    @classmethod
    def of(cls, item: ChangesetItem) -> ChangesetItemOut:
        """From a stored item, its text as HubSpot has it."""
        return cls(
            content_type=item.content_type,
            hubspot_id=item.hubspot_id,
            base_version=item.base_version,
            fields=shown(item.fields),
            before=shown(item.before),
            state=item.state,
            reason=item.reason,
            warnings=list(item.warnings),
        )


class Counts(BaseModel):
    changed: int
    unchanged: int
    invalid: int


class ChangesetOut(BaseModel):
    """A changeset, its counts, the HubSpot requests its push costs, and a page of items."""

    id: int
    portal_id: int
    content_type: ContentType | None = Field(description="null when its items span types")
    source: str = Field(description="import or rollback")
    rolls_back: int | None
    filename: str | None
    status: str = Field(description="draft, pushing or pushed")
    created_at: datetime
    pushed_at: datetime | None
    counts: Counts
    states: dict[str, int] = Field(description="items by state")
    requests: dict[str, int] = Field(
        description="HubSpot requests a push of the pending items costs, by type"
    )
    warnings: int = Field(description="warnings on this page's items")
    items: list[ChangesetItemOut]
    next: str | None = Field(description="`after` for the next page of items; null: no more")

    @classmethod
    def of(cls, preview: Preview, next_cursor: str | None) -> ChangesetOut:
        """From a preview (its items: one page)."""
        changeset = preview.changeset
        return cls(
            id=changeset.id,
            portal_id=changeset.portal_id,
            content_type=changeset.content_type,
            source=changeset.source,
            rolls_back=changeset.rolls_back,
            filename=changeset.filename,
            status=changeset.status,
            created_at=changeset.created_at,
            pushed_at=changeset.pushed_at,
            counts=Counts(**preview.counts.as_dict()),
            states=dict(preview.states),
            requests=dict(preview.requests),
            warnings=len(preview.warnings),
            items=[ChangesetItemOut.of(item) for item in preview.items],
            next=next_cursor,
        )
