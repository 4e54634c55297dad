"""`/v1/portals`: connect, list and delete portals; start fetches and exports of one."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Response, status

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.changeset_schemas import ExportRequest
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.errors import (
    ApiError,
    DuplicateJobsBody,
    ErrorBody,
    error_responses,
)
from smuves_sync.api.params import PortalId, member_portal
from smuves_sync.api.schemas import (
    ExportAccepted,
    ExportOut,
    FetchAccepted,
    FetchRequest,
    PortalConnect,
    PortalList,
    PortalOut,
    RunOut,
    SkippedType,
)
from smuves_sync.db.portals import (
    portal_connect,
    portal_delete,
    portal_list,
    portal_mark_token_refused,
)
from smuves_sync.errors import (
    HubSpotError,
    NotPermitted,
    PortalNeedsReconnect,
    TokenPortalMismatch,
    TokenRejected,
)
from smuves_sync.export_files import remove_portal_exports
from smuves_sync.hubspot.client import verify_portal_token
from smuves_sync.orchestrator import start_export, start_fetch

log = logging.getLogger(__name__)

# The roles that may start fetches and exports and stop runs (the database's editor_portal_ids).
STARTING_ROLES = frozenset({"owner", "editor"})

router = APIRouter(prefix="/v1/portals", tags=["portals"], responses=error_responses(401, 422))

# What the two ways to start a run answer: 202 with the run, or 403 (a viewer: only owners
# and editors start runs), 404, 413 (body too large), or 409 ALL_DUPLICATE_JOBS.
_STARTS: dict[str, Any] = {
    "status_code": status.HTTP_202_ACCEPTED,
    "responses": {
        **error_responses(403, 404, 413),
        409: {
            "model": DuplicateJobsBody,
            "description": "ALL_DUPLICATE_JOBS: every requested type is already in flight",
        },
    },
}
# A fetch also answers 422 PORTAL_NEEDS_RECONNECT: HubSpot refused the portal's token.
_FETCH_STARTS: dict[str, Any] = {
    **_STARTS,
    "responses": {
        **_STARTS["responses"],
        422: {
            "model": ErrorBody,
            "description": "Invalid input (INVALID_INPUT); PORTAL_NEEDS_RECONNECT: HubSpot "
            "refused the portal's token, nothing was started: reconnect the portal with a new "
            "token (POST /v1/portals) first",
        },
    },
}


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={
        200: {"model": PortalOut, "description": "You already owned it: name and token replaced"},
        **error_responses(409, 413, 502),
        422: {
            "model": ErrorBody,
            "description": "Invalid input (INVALID_INPUT); TOKEN_PORTAL_MISMATCH: HubSpot says "
            "the token belongs to another portal; HUBSPOT_TOKEN_REJECTED: HubSpot refused it",
        },
    },
    summary="Connect a portal (or reconnect one you own with a new token)",
)
async def connect_portal(
    body: PortalConnect, ctx: Context, principal: CurrentPrincipal, response: Response
) -> PortalOut:
    """HubSpot is asked first which portal the token belongs to (its account details): a token
    of another portal is 422 TOKEN_PORTAL_MISMATCH and nothing is stored. Only the owner may
    reconnect a portal; anyone else gets 409. The token is stored encrypted and never
    returned; the portal's time zone is taken from HubSpot."""
    try:
        account = await verify_portal_token(body.id, body.token, ctx.settings)
    except (TokenPortalMismatch, TokenRejected) as error:
        raise ApiError(422, error.code, str(error)) from None
    except HubSpotError as error:
        log.warning("portal %s: HubSpot could not confirm a token: %s", body.id, error)
        raise ApiError(
            502,
            "HUBSPOT_UNAVAILABLE",
            "HubSpot could not confirm which portal the token belongs to; try again shortly",
        ) from None
    encrypted = ctx.cipher.encrypt(body.token)
    async with user_session(ctx, principal) as db:
        connected = await portal_connect(db, body.id, body.name, encrypted, account.time_zone)
    if connected is None:
        raise ApiError(
            409,
            "PORTAL_ALREADY_CONNECTED",
            f"portal {body.id} is already connected by another account; its owner can share it",
        )
    portal, created = connected
    if not created:
        response.status_code = status.HTTP_200_OK
    return PortalOut.model_validate(portal)


@router.get("", summary="Your portals")
async def list_portals(ctx: Context, principal: CurrentPrincipal) -> PortalList:
    """Every portal you own or are a member of."""
    async with user_session(ctx, principal) as db:
        portals = await portal_list(db)
    return PortalList(items=[PortalOut.model_validate(p) for p in portals])


@router.delete(
    "/{portal_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=error_responses(403, 404),
    summary="Delete a portal you own, with its runs, content and exports",
)
async def delete_portal(portal_id: PortalId, ctx: Context, principal: CurrentPrincipal) -> None:
    """Workers still running one of its jobs lose their lease at their next heartbeat; its
    export files are removed once the delete has committed."""
    async with user_session(ctx, principal) as db:
        portal = await member_portal(db, portal_id)
        if portal.owner_id != principal.user_id or not await portal_delete(db, portal_id):
            raise ApiError(403, "FORBIDDEN", f"only the owner of portal {portal_id} may delete it")
    await asyncio.to_thread(remove_portal_exports, ctx.settings.export_dir, portal_id)


@router.post(
    "/{portal_id}/fetches",
    summary="Start fetching content types of a portal",
    **_FETCH_STARTS,
)
async def start_portal_fetch(
    portal_id: PortalId,
    ctx: Context,
    principal: CurrentPrincipal,
    body: Annotated[FetchRequest | None, Body()] = None,
) -> FetchAccepted:
    """Only the types not already being fetched get a job; 409 when that leaves none. Only
    the portal's owners and editors may start one (403 FORBIDDEN for a viewer).

    Each new job comes with its type's total when HubSpot counts it in time (a few seconds at
    most, `SMUVES_COUNT_TIMEOUT_SECONDS`); otherwise the job counts it when a worker starts it.
    A portal whose token HubSpot refused (`needs_reconnect`) is refused with 422
    PORTAL_NEEDS_RECONNECT before anything is asked of HubSpot; a token HubSpot refuses now is
    asked one count, marks the portal and is refused the same way.
    """
    types = body.content_types if body is not None else None
    async with user_session(ctx, principal) as db:
        access = await member_portal(db, portal_id)
        if access.role not in STARTING_ROLES:
            # The database refuses a viewer's run anyway; asked here, HubSpot is not asked
            # to count for a fetch that cannot start.
            raise NotPermitted(
                f"only the owners and editors of portal {portal_id} may start its fetches; "
                f"your role is {access.role}"
            )
        full = body is not None and body.full
        plan = await ctx.counter.plan(db, portal_id, types, full=full)
    # Between the two transactions: no connection is held while HubSpot answers.
    try:
        totals = await ctx.counter.count(plan)
    except PortalNeedsReconnect:
        async with user_session(ctx, principal, sign_in=False) as db:
            await portal_mark_token_refused(db, portal_id)
        raise
    async with user_session(ctx, principal, sign_in=False) as db:
        started = await start_fetch(
            db,
            portal_id,
            types,
            owner_id=principal.user_id,
            totals=totals,
            full=full,
        )
    return FetchAccepted(
        run=RunOut.of(started.run, list(started.jobs)),
        skipped=[
            SkippedType(content_type=t, run_id=run_id) for t, run_id in started.skipped.items()
        ],
        totals={job.content_type: job.total for job in started.jobs},
    )


@router.post(
    "/{portal_id}/exports",
    summary="Start exporting one content type of a portal",
    **_STARTS,
)
async def start_portal_export(
    portal_id: PortalId, body: ExportRequest, ctx: Context, principal: CurrentPrincipal
) -> ExportAccepted:
    """A worker writes the file; follow it with GET /v1/exports/{id}. The objects marked
    deleted are left out unless `include_deleted`. With `edit` (CSV), an export for editing
    (of `fields`, default every editable field; 422 for a type or field that cannot be
    edited). Only the portal's owners and editors may start one (403 FORBIDDEN for a viewer)."""
    async with user_session(ctx, principal) as db:
        await member_portal(db, portal_id)
        started = await start_export(
            db,
            portal_id,
            body.content_type,
            body.format,
            include_deleted=body.include_deleted,
            owner_id=principal.user_id,
            edit=body.edit,
            fields=body.fields,
        )
    return ExportAccepted(
        run=RunOut.of(started.run, [started.job]), export=ExportOut.of(started.export)
    )
