"""`POST /v1/changesets/{id}/push`: push a changeset's pending items to HubSpot (202).

The push run gets a job per type of the changeset's pending items; workers push them
(workers/push.py) and the items' states follow (`GET /v1/changesets/{id}`). Only the portal's
owners and editors may push (403 for a viewer: the database refuses it); a changeset being
pushed already, or a type of the portal that another push holds, is 409.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, status
from pydantic import BaseModel, Field

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.errors import DuplicateJobsBody, error_responses
from smuves_sync.api.schemas import MAX_ID, RunOut
from smuves_sync.push_start import start_push

router = APIRouter(
    prefix="/v1/changesets", tags=["changesets"], responses=error_responses(401, 404, 422)
)

ChangesetId = Annotated[int, Path(gt=0, le=MAX_ID, description="changeset id")]


class PushRequest(BaseModel):
    publish: Literal["live", "draft"] = Field(
        default="live",
        description="live: edit the live pages and posts and publish the HubDB tables written "
        "to (a table whose draft holds other edits is not: its items are held); draft: write "
        "the drafts only, nothing goes live",
    )


class PushAccepted(BaseModel):
    changeset: int
    publish: Literal["live", "draft"]
    run: RunOut


@router.post(
    "/{changeset_id}/push",
    summary="Push a changeset to HubSpot",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        **error_responses(403),
        409: {
            "model": DuplicateJobsBody,
            "description": "CHANGESET_BEING_PUSHED / ALL_DUPLICATE_JOBS: a push of it (or of "
            "one of its types in the portal) is in flight",
        },
    },
)
async def push_changeset(
    changeset_id: ChangesetId,
    ctx: Context,
    principal: CurrentPrincipal,
    body: Annotated[PushRequest | None, Body()] = None,
) -> PushAccepted:
    """404 for a changeset you cannot see or with nothing pending."""
    publish = body.publish if body is not None else "live"
    async with user_session(ctx, principal) as db:
        started = await start_push(db, changeset_id, publish=publish, owner_id=principal.user_id)
    return PushAccepted(
        changeset=changeset_id, publish=publish, run=RunOut.of(started.run, list(started.jobs))
    )
