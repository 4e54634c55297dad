"""The dashboard application: `create_dashboard_app(settings, pool=…, auth=…)`.

A Starlette app, separate from the tenant API (`smuves_sync.api`): its own process, its own
routes, the login role's pool (every tenant's rows), its own sign-in. Every response carries
`Server-Timing: app;dur=<ms>` (the time to the response's first byte, measured here) and
headers that keep the pages to themselves: a Content-Security-Policy allowing only this
origin's scripts and styles, no framing, no referrer beyond this origin, no caching of pages.

    GET  /                        overview            GET  /events/overview   (SSE)
    GET  /runs  ·  /runs/{id}     runs, one run       GET  /runs/{id}/events  (SSE)
    POST /runs/{id}/stop          Stop
    GET  /dead-letter             failed jobs         POST /dead-letter/{retry,requeue,retry-all}
    GET  /portals                 portals             POST /portals/{id}/sync
    GET  /login · POST /login · POST /logout          sign in and out
    GET  /static/…                CSS and the vendored htmx
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smuves_sync.dashboard import actions, changesets, events, pages, push, signin
from smuves_sync.dashboard.auth import DashboardAuth
from smuves_sync.dashboard.web import DashboardContext, Missing, refusal
from smuves_sync.db import Pool
from smuves_sync.errors import InvalidInput
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Not no-referrer: with it a browser sends `Origin: null` with this origin's own forms,
    # and the origin check of every POST relies on that header.
    "Referrer-Policy": "same-origin",
}


class _Headers:
    """Adds Server-Timing, the security headers and a caching rule to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        static = str(scope.get("path", "")).startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                elapsed = (time.perf_counter() - started) * 1000
                headers = MutableHeaders(scope=message)
                headers.append("Server-Timing", f"app;dur={elapsed:.1f}")
                for name, value in _SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if "cache-control" not in headers:
                    headers["Cache-Control"] = "private, max-age=3600" if static else "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _bad_input(request: Request, error: Exception) -> Response:
    return refusal(request, 400, "Bad request", str(error))


async def _missing(request: Request, error: Exception) -> Response:
    assert isinstance(error, Missing)
    return refusal(request, 404, error.title, str(error))


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    if error.status_code == 404:
        return refusal(request, 404, "Not found", "There is no such page in the dashboard.")
    return refusal(request, error.status_code, "Refused", str(error.detail))


async def _server_error(request: Request, error: Exception) -> Response:
    log.exception("dashboard request failed: %s %s", request.method, request.url.path)
    return refusal(
        request,
        500,
        "Something went wrong",
        "The dashboard could not answer (see its log); nothing you asked for was half done.",
    )


def create_dashboard_app(settings: Settings, *, pool: Pool, auth: DashboardAuth) -> Starlette:
    """The dashboard on `pool` (acting as the login role), with `auth`'s sign-in."""
    routes = [
        Route("/", pages.overview),
        Route("/login", signin.login_page, methods=["GET"]),
        Route("/login", signin.login, methods=["POST"]),
        Route("/logout", signin.logout, methods=["POST"]),
        Route("/events/overview", events.overview_events),
        Route("/runs", pages.runs),
        Route("/runs/{run_id:int}", pages.run_detail),
        Route("/runs/{run_id:int}/events", events.run_events),
        Route("/runs/{run_id:int}/stop", actions.stop, methods=["POST"]),
        Route("/dead-letter", pages.dead_letter),
        Route("/dead-letter/retry", actions.retry, methods=["POST"]),
        Route("/dead-letter/requeue", actions.requeue_from_start, methods=["POST"]),
        Route("/dead-letter/retry-all", actions.retry_all, methods=["POST"]),
        Route("/portals", pages.portals),
        Route("/portals/{portal_id:int}/sync", actions.sync, methods=["POST"]),
        Route("/changesets/{changeset_id:int}", changesets.changeset_page),
        Route("/changesets/{changeset_id:int}/push", push.push, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            InvalidInput: _bad_input,
            Missing: _missing,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    app.state.dashboard = DashboardContext(
        settings=settings,
        pool=pool,
        auth=auth,
        refresh_seconds=settings.dashboard_refresh_seconds,
    )
    app.add_middleware(_Headers)
    return app
