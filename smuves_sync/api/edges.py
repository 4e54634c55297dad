"""What every request meets before a route: who is asking, how large the body is, which port.

Three pure ASGI middlewares, outermost first (`install_edges`):

    Listeners        with `smuves serve --metrics-port`, that port serves /metrics and nothing
                     else, and marks the requests it serves
    Authenticate     requests for a /v1 route carry a valid bearer token or are answered 401
                     at once: no body is read, parsed or validated for a caller nobody knows
                     (an unknown path or method is left to the router: 404, 405)
    LimitBody        a body over `max_request_bytes` is answered 413, whether it declares its
                     length (refused before a byte is read) or comes chunked (refused at the
                     first byte too many)

FastAPI reads and parses a body before it resolves dependencies, so neither a dependency nor a
router-level one can answer before the body is read: this has to sit in front of the app.
Every answer here has the API's ``{"code", "message"}`` shape.
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI
from starlette.routing import Match, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smuves_sync.api.auth import PRINCIPAL_STATE, TokenVerifier
from smuves_sync.api.errors import ApiError, error_response
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

PROTECTED_PREFIX = "/v1"
METRICS_PATH = "/metrics"
# Set on requests that came in on the metrics listener.
METRICS_LISTENER_STATE = "metrics_listener"


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _answer(scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
    response = error_response(error.status, error.code, error.message, headers=error.headers)
    await response(scope, receive, send)


class Authenticate:
    """Verifies the bearer token of every request for a /v1 route before the app sees it."""

    def __init__(self, app: ASGIApp, *, verifier: TokenVerifier, router: Router) -> None:
        self.app = app
        self.verifier = verifier
        self.router = router

    def _routed(self, scope: Scope) -> bool:
        # Unknown paths and wrong methods are answered by the router (404, 405), body unread.
        return any(route.matches(scope)[0] is Match.FULL for route in self.router.routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 401, or pass the request on with its principal in the scope's state."""
        if (
            scope["type"] != "http"
            or not _under(scope["path"], PROTECTED_PREFIX)
            or not self._routed(scope)
        ):
            await self.app(scope, receive, send)
            return
        try:
            principal = self.verifier.from_header(_header(scope, b"authorization"))
        except ApiError as error:
            await _answer(scope, receive, send, error)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.app(scope, receive, send)


class Listeners:
    """Requests on the metrics port reach /metrics only; the tenants' port is unchanged."""

    def __init__(self, app: ASGIApp, *, metrics_port: int) -> None:
        self.app = app
        self.metrics_port = metrics_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """404 for anything but /metrics on the metrics port; mark what it lets through."""
        server = scope.get("server")
        if scope["type"] != "http" or not server or server[1] != self.metrics_port:
            await self.app(scope, receive, send)
            return
        if scope["path"] != METRICS_PATH:
            await _answer(scope, receive, send, ApiError(404, "NOT_FOUND", "Not Found"))
            return
        scope.setdefault("state", {})[METRICS_LISTENER_STATE] = True
        await self.app(scope, receive, send)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "PAYLOAD_TOO_LARGE", f"the request body is larger than {limit} bytes")


def _upload_too_large(limit: int) -> ApiError:
    return ApiError(
        422,
        "CHANGESET_TOO_LARGE",
        f"the changeset file is larger than the {limit} bytes a changeset may have "
        "(SMUVES_CHANGESET_MAX_BYTES)",
    )


class LimitBody:
    """Refuses request bodies larger than `limit` bytes with 413; the POST bodies of
    `upload_path` (a changeset's file) larger than `upload_limit` with 422."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        limit: int,
        upload_limit: int | None = None,
        upload_path: str | None = None,
    ) -> None:
        self.app = app
        self.default = (limit, _too_large(limit))
        self.upload = (
            None
            if upload_path is None or upload_limit is None
            else (re.compile(upload_path), (upload_limit, _upload_too_large(upload_limit)))
        )

    def _limit(self, scope: Scope) -> tuple[int, ApiError]:
        if (
            self.upload is not None
            and scope.get("method") == "POST"
            and self.upload[0].fullmatch(scope["path"])
        ):
            return self.upload[1]
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a `receive` that counts; 413 once it goes over."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, refusal = self._limit(scope)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await _answer(scope, receive, send, refusal)
            return
        received = 0
        refused = started = False

        async def counted() -> Message:
            nonlocal received, refused, started
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:  # never a second answer after the app began its own
                        started = True
                        await _answer(scope, receive, send, refusal)
                    # The app sees a caller that went away, and stops reading.
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 has been sent; whatever the app answers now goes nowhere
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not refused:
                raise
            # The app failed on the body it was cut off from; the caller has had its 413.
            log.debug("request refused as too large; the app's error is dropped", exc_info=True)


def install_edges(
    app: FastAPI,
    *,
    verifier: TokenVerifier,
    settings: Settings,
    metrics_port: int | None = None,
    upload_path: str | None = None,
) -> None:
    """Add the middlewares to `app`: Listeners (with `metrics_port`), Authenticate, LimitBody
    (the API's cap, SMUVES_MAX_REQUEST_BYTES; the changeset cap for POSTs of `upload_path`)."""
    # Starlette runs the middleware added last first.
    app.add_middleware(
        LimitBody,
        limit=settings.max_request_bytes,
        upload_limit=settings.changeset_max_bytes,
        upload_path=upload_path,
    )
    app.add_middleware(Authenticate, verifier=verifier, router=app.router)
    if metrics_port is not None:
        app.add_middleware(Listeners, metrics_port=metrics_port)
