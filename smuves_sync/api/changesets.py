"""`/v1/portals/{id}/changesets` and `/v1/changesets/{id}`: import a changeset, read it, roll
one back.

An import's body is the file itself: `text/csv` (an edit export, changed or not),
`application/jsonl` (one change a line), or `application/json` (`{"content_type": T,
"changes": [{"hubspot_id", "base_version", "fields"}]}`). It may be as large as
``SMUVES_CHANGESET_MAX_BYTES`` (the edges let this route's body past the API's own cap and stop
it at that one, 422). A file that cannot be read answers 422 with one line and stores nothing;
a bad cell makes only its item invalid. Members read; only owners and editors import or roll
back (403 for a viewer, and the database refuses it too).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.changeset_schemas import ChangesetOut
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.cursors import decode_page_cursor, encode_page_cursor
from smuves_sync.api.errors import error_responses, found
from smuves_sync.api.params import PageLimit, PortalId, member_portal
from smuves_sync.api.schemas import MAX_ID
from smuves_sync.changesets import (
    ChangesetFileRefused,
    Media,
    changeset_preview,
    import_changeset,
    read_changes,
    rollback_changeset,
)
from smuves_sync.db import Database
from smuves_sync.db.changesets import changeset_get
from smuves_sync.errors import NotPermitted
from smuves_sync.models import ContentType

router = APIRouter(tags=["changesets"], responses=error_responses(401, 404, 422))

ChangesetId = Annotated[int, Path(gt=0, le=MAX_ID, description="changeset id")]
# The path whose POST body the edges cap at SMUVES_CHANGESET_MAX_BYTES, not the API's cap.
UPLOAD_PATH = r"/v1/portals/[0-9]+/changesets"
_MEDIA = {
    "text/csv": Media.CSV,
    "application/jsonl": Media.JSONL,
    "application/x-ndjson": Media.JSONL,
    "application/json": Media.JSON,
}
_UPLOAD = {
    "requestBody": {
        "required": True,
        "content": {
            "text/csv": {"schema": {"type": "string", "format": "binary"}},
            "application/jsonl": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["content_type", "changes"],
                    "properties": {
                        "content_type": {"type": "string"},
                        "changes": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["hubspot_id", "fields"],
                                "properties": {
                                    "hubspot_id": {"type": "string"},
                                    "base_version": {"type": "integer"},
                                    "fields": {"type": "object"},
                                },
                            },
                        },
                    },
                }
            },
        },
    }
}
_WRITERS = ("owner", "editor")


def _media_of(request: Request) -> Media:
    word = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if word not in _MEDIA:
        raise ChangesetFileRefused(
            f"a changeset is text/csv, application/jsonl or application/json, not {word!r}"
        )
    return _MEDIA[word]


async def _may_write(db: Database, portal_id: int) -> None:
    access = await member_portal(db, portal_id)
    if access.role not in _WRITERS:
        raise NotPermitted(
            f"only the owners and editors of portal {portal_id} may import changesets; "
            f"your role is {access.role}"
        )


async def _answer(db: Database, changeset_id: int, limit: int, after: str | None) -> ChangesetOut:
    key = None if after is None else decode_page_cursor(after, _key)
    preview = found(
        await changeset_preview(db, changeset_id, limit=limit + 1, after=key),
        f"changeset {changeset_id}",
    )
    items = list(preview.items)
    cursor = None
    if len(items) > limit:
        items = items[:limit]
        cursor = encode_page_cursor([str(items[-1].content_type), items[-1].hubspot_id])
    page = type(preview)(preview.changeset, preview.states, items, preview.requests)
    return ChangesetOut.of(page, cursor)


def _key(value: Any) -> tuple[str, str]:
    content_type, hubspot_id = value
    return str(ContentType(content_type)), str(hubspot_id)


@router.post(
    "/v1/portals/{portal_id}/changesets",
    status_code=201,
    summary="Import a changeset: a file of edits, compared with the stored versions",
    openapi_extra=_UPLOAD,
    responses=error_responses(403),
)
async def import_portal_changeset(
    portal_id: PortalId,
    request: Request,
    ctx: Context,
    principal: CurrentPrincipal,
    content_type: Annotated[ContentType | None, Query(description="the file's type")] = None,
    filename: Annotated[str | None, Query(max_length=255, pattern=r"^[^\x00/\\]+$")] = None,
    limit: PageLimit = 100,
) -> ChangesetOut:
    """The preview: counts (changed, unchanged, invalid), the requests a push costs, the first
    `limit` items (fields before → after, state, reason, warnings). 422 for a file that cannot
    be read, nothing stored; 403 for a viewer."""
    async with user_session(ctx, principal) as db:
        await _may_write(db, portal_id)
    # The file is read between two transactions: no connection is held while it arrives.
    changes = read_changes(
        await request.body(),
        media=_media_of(request),
        content_type=content_type,
        filename=filename,
        max_bytes=ctx.settings.changeset_max_bytes,
    )
    async with user_session(ctx, principal, sign_in=False) as db:
        stored, _ = await import_changeset(
            db, portal_id, changes, owner_id=principal.user_id, filename=filename
        )
        return await _answer(db, stored.id, limit, None)


@router.get("/v1/changesets/{changeset_id}", summary="A changeset and a page of its items")
async def get_changeset(
    changeset_id: ChangesetId,
    ctx: Context,
    principal: CurrentPrincipal,
    limit: PageLimit = 100,
    after: Annotated[str | None, Query(max_length=2000, description="a page's `next`")] = None,
) -> ChangesetOut:
    """Items in (content_type, hubspot_id) order, `limit` a page; any member may read."""
    async with user_session(ctx, principal) as db:
        return await _answer(db, changeset_id, limit, after)


@router.post(
    "/v1/changesets/{changeset_id}/rollback",
    status_code=201,
    summary="Roll a pushed changeset back: a new changeset of the values before its push",
    responses=error_responses(403),
)
async def rollback_portal_changeset(
    changeset_id: ChangesetId, ctx: Context, principal: CurrentPrincipal, limit: PageLimit = 100
) -> ChangesetOut:
    """Based on the versions the push produced; previewed like an import. 422 when no item
    of it was applied; 403 for a viewer."""
    async with user_session(ctx, principal) as db:
        source = found(await changeset_get(db, changeset_id), f"changeset {changeset_id}")
        await _may_write(db, source.portal_id)
        stored, _ = await rollback_changeset(db, changeset_id, owner_id=principal.user_id)
        return await _answer(db, stored.id, limit, None)
