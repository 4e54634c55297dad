"""`/v1/notifications`: what the user was told (runs finished, jobs failed), newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.errors import error_responses, found
from smuves_sync.api.params import PageLimit
from smuves_sync.api.schemas import MAX_ID, NotificationOut, NotificationPageOut
from smuves_sync.db.notifications import notification_mark_read, notification_page

router = APIRouter(
    prefix="/v1/notifications", tags=["notifications"], responses=error_responses(401, 422)
)


@router.get("", summary="Your notifications, newest first")
async def list_notifications(
    ctx: Context,
    principal: CurrentPrincipal,
    limit: PageLimit = 50,
    after: Annotated[
        int | None, Query(gt=0, le=MAX_ID, description="`next` of the previous page")
    ] = None,
) -> NotificationPageOut:
    """A page of notifications older than `after` (the newest when omitted)."""
    async with user_session(ctx, principal) as db:
        page = await notification_page(db, before=after, limit=limit)
    return NotificationPageOut(
        items=[NotificationOut.model_validate(n) for n in page.items], next=page.last_key
    )


@router.post(
    "/{notification_id}/read",
    responses=error_responses(404),
    summary="Mark a notification read",
)
async def mark_read(
    notification_id: Annotated[int, Path(gt=0, le=MAX_ID)],
    ctx: Context,
    principal: CurrentPrincipal,
) -> NotificationOut:
    """Marking twice keeps the first read time."""
    async with user_session(ctx, principal) as db:
        notification = await notification_mark_read(db, notification_id)
    return NotificationOut.model_validate(found(notification, f"notification {notification_id}"))
