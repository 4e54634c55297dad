"""Content history: an object's versions, one version's document, a diff of two versions, and
a portal's changes (`/v1/portals/{id}/content/{type}/{hubspot_id}/versions…`, `…/diff`,
`/v1/portals/{id}/changes`).

Versions are written whenever a fetch stores a changed object (content_items' triggers). An object's
versions page by version number (`next` → `after`); the changes page by an opaque keyset
cursor over the order they were recorded, so a page costs the same however deep it is. A
portal that is not the caller's, an object without history and a version that does not exist
all answer 404.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.cursors import decode_page_cursor, encode_page_cursor
from smuves_sync.api.errors import ApiError, ErrorBody, error_responses, found, not_found
from smuves_sync.api.params import HubSpotId, PageLimit, PortalId, TypePath, member_portal
from smuves_sync.api.schemas import (
    MAX_ID,
    ChangeOut,
    ChangePageOut,
    DiffOut,
    FieldChangeOut,
    VersionDocumentOut,
    VersionOut,
    VersionPageOut,
)
from smuves_sync.db import Database
from smuves_sync.db.versions import (
    ChangeFilter,
    ContentVersion,
    VersionDocument,
    changes_page,
    compared_versions,
    version_documents,
    version_latest,
    versions_of_object,
)
from smuves_sync.json_diff import diff_documents
from smuves_sync.models import ContentType

router = APIRouter(tags=["history"], responses=error_responses(401, 404, 422))

MAX_VERSION = 2**31 - 1
VersionQuery = Annotated[int | None, Query(ge=1, le=MAX_VERSION)]
OBJECT = "/v1/portals/{portal_id}/content/{type}/{hubspot_id}"
# A diff runs in a thread, off the event loop every tenant's requests share. Its bound on what
# the line diffs compare (json_diff.MAX_DIFF_LINES) keeps it well under a second; a thread
# cannot be stopped, so this limit only ends the wait for one that a busy process has not
# finished in time, with an answer instead of a hung request.
DIFF_TIME_LIMIT_SECONDS = 5.0
DIFF_TIMEOUT = "DIFF_TIMEOUT"


def encode_change_cursor(key: tuple[datetime, int]) -> str:
    """The opaque `next` cursor of a change's key."""
    return encode_page_cursor([key[0].isoformat(), key[1]])


def decode_change_cursor(cursor: str) -> tuple[datetime, int]:
    """The key of a cursor `encode_change_cursor` made; 422 naming `after` otherwise."""
    return decode_page_cursor(cursor, _change_key)


def _change_key(decoded: Any) -> tuple[datetime, int]:
    moment, change_id = decoded
    if not isinstance(change_id, int) or isinstance(change_id, bool):
        raise ValueError(change_id)
    when = datetime.fromisoformat(moment)
    if when.tzinfo is None or not 0 < change_id <= MAX_ID:
        raise ValueError(moment)
    return when, change_id


def _version_out(version: ContentVersion) -> VersionOut:
    return VersionOut.model_validate(version).model_copy(update={"current": version.current})


def _with_document(found_version: VersionDocument) -> VersionDocumentOut:
    v = found_version.version
    return VersionDocumentOut(
        **_version_out(v).model_dump(),
        content_type=v.content_type,
        hubspot_id=v.hubspot_id,
        document=found_version.document,
    )


async def _latest(db: Database, portal_id: int, content_type: ContentType, hubspot_id: str) -> int:
    """The object's newest version; 404 for a portal not the caller's or no history."""
    await member_portal(db, portal_id)
    return found(
        await version_latest(db, portal_id, content_type, hubspot_id),
        f"{content_type} {hubspot_id} of portal {portal_id}",
    )


@router.get(
    f"{OBJECT}/versions",
    summary="An object's versions, oldest first",
)
async def list_versions(
    portal_id: PortalId,
    type: TypePath,
    hubspot_id: HubSpotId,
    ctx: Context,
    principal: CurrentPrincipal,
    limit: PageLimit = 50,
    after: Annotated[
        int | None, Query(ge=1, le=MAX_VERSION, description="`next` of the previous page")
    ] = None,
) -> VersionPageOut:
    """Every version the history keeps (older ones go after SMUVES_HISTORY_DAYS), each with
    the event that began it: created, updated, archived, unarchived, deleted, restored."""
    async with user_session(ctx, principal) as db:
        await _latest(db, portal_id, type, hubspot_id)
        rows = await versions_of_object(
            db, portal_id, type, hubspot_id, after=after, limit=limit + 1
        )
    items = rows[:limit]
    more = len(rows) > limit
    return VersionPageOut(
        items=[_version_out(v) for v in items],
        next=items[-1].version if more and items else None,
    )


@router.get(
    f"{OBJECT}/versions/{{version}}",
    summary="One version of an object, with its document",
)
async def get_version(
    portal_id: PortalId,
    type: TypePath,
    hubspot_id: HubSpotId,
    version: Annotated[int, Path(ge=1, le=MAX_VERSION, description="the version number")],
    ctx: Context,
    principal: CurrentPrincipal,
) -> VersionDocumentOut:
    """The object as HubSpot returned it in that version."""
    async with user_session(ctx, principal) as db:
        await member_portal(db, portal_id)
        documents = await version_documents(db, portal_id, type, hubspot_id, [version])
    return _with_document(
        found(documents.get(version), f"version {version} of {type} {hubspot_id}")
    )


@router.get(
    f"{OBJECT}/diff",
    summary="What changed in an object between two versions, field by field",
    responses={
        503: {
            "model": ErrorBody,
            "description": f"The diff took longer than its time limit ({DIFF_TIMEOUT}); retry",
        }
    },
)
async def diff_versions(
    portal_id: PortalId,
    type: TypePath,
    hubspot_id: HubSpotId,
    ctx: Context,
    principal: CurrentPrincipal,
    from_: Annotated[
        int | None,
        Query(alias="from", ge=1, le=MAX_VERSION, description="default: the one before `to`"),
    ] = None,
    to: Annotated[
        int | None, Query(ge=1, le=MAX_VERSION, description="default: the current version")
    ] = None,
) -> DiffOut:
    """Each changed field by its JSON path, old and new value; long text (HTML bodies) also
    as a unified diff, unless the document's line diffs would compare more text than their
    bound (then the field's `text_diff` is one line saying it is too large to show a line diff,
    with the sizes and the bound). Without `from`, version 1 is diffed against nothing (all
    added)."""
    async with user_session(ctx, principal) as db:
        latest = await _latest(db, portal_id, type, hubspot_id)
        older, newer = compared_versions(latest, from_, to)
        asked = [newer] if older is None else [older, newer]
        documents = await version_documents(db, portal_id, type, hubspot_id, asked)
    for number in asked:
        if number not in documents:
            raise not_found(f"version {number} of {type} {hubspot_id}")
    before = documents[older] if older is not None else None
    after = documents[newer]
    diffing = asyncio.to_thread(
        diff_documents,
        before.document if before else None,
        after.document,
        old_label=f"version {older}" if older is not None else "nothing",
        new_label=f"version {newer}",
    )
    try:
        changes = await asyncio.wait_for(diffing, DIFF_TIME_LIMIT_SECONDS)
    except TimeoutError:
        raise ApiError(
            503,
            DIFF_TIMEOUT,
            f"the diff took longer than {DIFF_TIME_LIMIT_SECONDS:g} s; retry shortly",
        ) from None
    return DiffOut.model_validate(
        {
            "content_type": type,
            "hubspot_id": hubspot_id,
            "from": _version_out(before.version) if before else None,
            "to": _version_out(after.version),
            "changes": [FieldChangeOut.model_validate(c) for c in changes],
        }
    )


@router.get(
    "/v1/portals/{portal_id}/changes",
    summary="What was created, updated, archived or deleted in a portal",
)
async def list_changes(
    portal_id: PortalId,
    ctx: Context,
    principal: CurrentPrincipal,
    since_run: Annotated[
        int | None, Query(gt=0, le=MAX_ID, description="changes made by this run or later")
    ] = None,
    since: Annotated[
        datetime | None,
        Query(description="changes recorded at or after this time (2026-11-01: midnight UTC)"),
    ] = None,
    type: Annotated[ContentType | None, Query(description="only this content type")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    after: Annotated[
        str | None, Query(max_length=200, description="`next` of the previous page")
    ] = None,
) -> ChangePageOut:
    """Every version recorded in the portal, oldest first, with the event that began it:
    created, updated, archived, unarchived, deleted, restored."""
    key = decode_change_cursor(after) if after is not None else None
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # a date or a time without offset: UTC
    async with user_session(ctx, principal) as db:
        await member_portal(db, portal_id)
        where = ChangeFilter(since_run=since_run, since=since, content_type=type)
        page = await changes_page(db, portal_id, where, after=key, limit=limit)
    return ChangePageOut(
        items=[ChangeOut.model_validate(c) for c in page.items],
        next=encode_change_cursor(page.last_key) if page.last_key else None,
    )
