"""Server-sent events that keep a page's live parts current (htmx's SSE extension swaps them).

    GET /runs/{id}/events    run-status, run-jobs: HTML fragments of the run page, whenever
                             they changed; `end` once the run has finished (the page closes
                             the stream on it), or when the run is gone
    GET /events/overview     queue-counts, in-flight, workers: the overview's counts, runs in
                             flight and workers

Every `refresh_seconds` the stream looks at the database (one short transaction: nothing is
held open between looks) and sends the fragments that changed; while nothing changes, a
comment now and then keeps proxies from closing it. A stream ends when its browser leaves,
when the session ends, or on database trouble (the browser then reconnects by itself).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from smuves_sync.dashboard.auth import COOKIE_NAME
from smuves_sync.dashboard.pages import overview_values, run_values
from smuves_sync.dashboard.views import render
from smuves_sync.dashboard.web import DashboardContext, context_of, path_id, session_of
from smuves_sync.errors import DatabaseError

log = logging.getLogger(__name__)

_KEEP_ALIVE_SECONDS = 15.0
_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

# One look: the fragments to send by event name, and whether the stream is done.
Look = Callable[[], Awaitable[tuple[dict[str, str], bool]]]


def sse_event(name: str, data: str) -> str:
    """One event; every line of `data` gets its own `data:` field."""
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {name}\n{lines}\n"


async def _stream(ctx: DashboardContext, cookie: str | None, look: Look) -> AsyncIterator[str]:
    sent: dict[str, str] = {}
    quiet_since = time.monotonic()
    while ctx.auth.session(cookie) is not None:
        try:
            fragments, done = await look()
        except DatabaseError as error:
            log.warning("live update stopped: %s", error)
            return
        for name, html in fragments.items():
            if sent.get(name) != html:
                yield sse_event(name, html)
                sent[name] = html
                quiet_since = time.monotonic()
        if done:
            yield sse_event("end", "finished")
            return
        if time.monotonic() - quiet_since >= _KEEP_ALIVE_SECONDS:
            yield ": keep-alive\n\n"
            quiet_since = time.monotonic()
        await asyncio.sleep(ctx.refresh_seconds)


def _unauthorised() -> Response:
    return PlainTextResponse("sign in first", status_code=401)


async def run_events(request: Request) -> Response:
    """The run page's status and jobs, until the run has finished."""
    session = session_of(request)
    if session is None:
        return _unauthorised()
    ctx = context_of(request)
    run_id = path_id(request, "run_id")

    async def look() -> tuple[dict[str, str], bool]:
        values = await run_values(ctx.db, run_id)
        if values is None:
            return {}, True
        common = {"session": session, "now": datetime.now(UTC), **values}
        fragments = {
            "run-status": render("_run_status.html", **common),
            "run-jobs": render("_run_jobs.html", **common),
        }
        return fragments, values["run"].status.is_terminal

    return StreamingResponse(
        _stream(ctx, request.cookies.get(COOKIE_NAME), look),
        media_type="text/event-stream",
        headers=_HEADERS,
    )


async def overview_events(request: Request) -> Response:
    """The overview's counts, runs in flight and workers, for as long as the page is open."""
    session = session_of(request)
    if session is None:
        return _unauthorised()
    ctx = context_of(request)

    async def look() -> tuple[dict[str, str], bool]:
        values = await overview_values(ctx.db)
        common = {"session": session, "now": datetime.now(UTC), **values}
        return {
            "queue-counts": render("_queue_counts.html", **common),
            "in-flight": render("_in_flight.html", **common),
            "workers": render("_workers.html", **common),
        }, False

    return StreamingResponse(
        _stream(ctx, request.cookies.get(COOKIE_NAME), look),
        media_type="text/event-stream",
        headers=_HEADERS,
    )
