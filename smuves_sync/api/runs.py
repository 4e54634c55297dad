"""`/v1/runs/{id}`: a run's progress, as a document or as Server-Sent Events, and stopping it.

The event stream looks at the run every `events_interval` seconds, each look a transaction of
its own (nothing is held open between looks), and sends

    event: progress        whenever the run or one of its jobs changed (data: the run)
    event: end             once the run has finished (data: the finished run); then it closes
    : keep-alive           a comment now and then while nothing changes, for proxies

A run that disappears while followed (its portal was deleted) ends the stream with `gone`.
The stream lives no longer than the bearer token it was opened with: at the token's `exp` it
sends `expired` and closes; the client reconnects with a fresh token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import StreamingResponse

from smuves_sync.api.auth import CurrentPrincipal, Principal
from smuves_sync.api.context import ApiContext, Context, user_session
from smuves_sync.api.errors import ApiError, error_responses, found
from smuves_sync.api.schemas import MAX_ID, RunOut
from smuves_sync.db import Database
from smuves_sync.db.fetch_reads import fetch_reads_of_run
from smuves_sync.db.rejects import run_rejects
from smuves_sync.db.runs import run_detail, run_get, run_stop

router = APIRouter(prefix="/v1/runs", tags=["runs"], responses=error_responses(401, 404, 422))

RunId = Annotated[int, Path(gt=0, le=MAX_ID, description="run id")]
# One Server-Sent Event as the document describes it: `data` is the run (RunOut) as JSON,
# or {"id": …} for `gone` and `expired`.
_EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["progress", "end", "gone", "expired"]},
        "data": {"type": "string", "description": "JSON: the run, as GET /v1/runs/{run_id}"},
    },
    "required": ["event", "data"],
}
# While nothing changes, a comment this often keeps proxies from closing the stream.
_KEEP_ALIVE_SECONDS = 15.0


async def load_run(db: Database, run_id: int) -> RunOut | None:
    """The run with its jobs and what it could not store, or None when absent or not
    visible."""
    found = await run_detail(db, run_id)
    if found is None:
        return None
    return RunOut.of(*found, await run_rejects(db, run_id), await fetch_reads_of_run(db, run_id))


@router.get("/{run_id}", summary="A run's status and per-job progress")
async def get_run(run_id: RunId, ctx: Context, principal: CurrentPrincipal) -> RunOut:
    """Processed / total, attempts and the last error of every job, the objects HubSpot
    sent that could not be stored (`rejected`: how many, why), and how each fetched type was
    read (`reads`: full or incremental, requests, changed, deleted, unchanged)."""
    async with user_session(ctx, principal) as db:
        return found(await load_run(db, run_id), f"run {run_id}")


def _event(name: str, data: str) -> str:
    return f"event: {name}\ndata: {data}\n\n"


async def _events(
    ctx: ApiContext, principal: Principal, run_id: int, first: RunOut
) -> AsyncIterator[str]:
    run: RunOut | None = first
    sent = ""
    quiet_since = time.monotonic()
    while True:
        if run is None:
            yield _event("gone", f'{{"id": {run_id}}}')
            return
        if run.status.is_terminal:
            yield _event("end", run.model_dump_json())
            return
        payload = run.model_dump_json()
        if payload != sent:
            yield _event("progress", payload)
            sent = payload
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= _KEEP_ALIVE_SECONDS:
            yield ": keep-alive\n\n"
            quiet_since = time.monotonic()
        left = (principal.expires_at - datetime.now(UTC)).total_seconds()
        await asyncio.sleep(max(0.0, min(ctx.events_interval, left)))
        if datetime.now(UTC) >= principal.expires_at:
            # Nothing more for a caller whose token has run out, not even whether the run ended.
            yield _event("expired", f'{{"id": {run_id}}}')
            return
        async with user_session(ctx, principal, sign_in=False) as db:
            run = await load_run(db, run_id)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "progress events until the run ends",
            "content": {"text/event-stream": {"schema": _EVENT_SCHEMA}},
        }
    },
    summary="Follow a run: Server-Sent Events until it ends",
)
async def run_events(run_id: RunId, ctx: Context, principal: CurrentPrincipal) -> StreamingResponse:
    """`progress` events with the run as it changes, then `end` with the finished run.

    The stream ends with `expired` when the bearer token does, whatever the run is doing.
    """
    async with user_session(ctx, principal) as db:
        first = found(await load_run(db, run_id), f"run {run_id}")
    return StreamingResponse(
        _events(ctx, principal, run_id, first),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post(
    "/{run_id}/stop",
    responses=error_responses(403, 409),
    summary="Stop a run: its pending and running jobs end as stopped",
)
async def stop_run(run_id: RunId, ctx: Context, principal: CurrentPrincipal) -> RunOut:
    """A worker running one of its jobs loses its lease at its next heartbeat and stops. Only
    the portal's owners and editors may stop its runs (403 FORBIDDEN for a viewer)."""
    async with user_session(ctx, principal) as db:
        before = found(await run_get(db, run_id), f"run {run_id}")
        if before.status.is_terminal:
            raise ApiError(
                409, "RUN_FINISHED", f"run {run_id} has already finished ({before.status})"
            )
        found(await run_stop(db, run_id), f"run {run_id}")
        after = await load_run(db, run_id)
    assert after is not None  # visible a moment ago, in the same transaction
    return after
