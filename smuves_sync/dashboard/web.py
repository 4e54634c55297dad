"""What every page and action handler shares: the app's context, sessions, forms, responses.

    @operator_page
    async def overview(request: Request, session: Session) -> Response: ...

    @operator_action
    async def retry(request: Request, session: Session, form: Form) -> Response: ...

`operator_page` sends a browser without a session to the sign-in page; `operator_action`
refuses a POST without a session (401), from another origin or without the session's CSRF
token (403) before the handler runs, so nothing changes; a refusal of a signed-in browser is
written to the audit trail (`audit`), one without a session is not (anybody could send
those, without end). A handler raises `InvalidInput` for a bad parameter; the app answers
400 with its message. What a handler looks up goes through `existing`: when it is not
there, the app answers 404.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from smuves_sync.dashboard.auth import COOKIE_NAME, DashboardAuth, Session
from smuves_sync.dashboard.views import render
from smuves_sync.db import Database, OnPool
from smuves_sync.db.operator_actions import operator_action_record
from smuves_sync.errors import InvalidInput
from smuves_sync.settings import Settings

T = TypeVar("T")

# A form bigger than this is not one of ours.
MAX_FORM_BYTES = 64 * 1024

# Counts stop here: past it, "more than 100,000" says enough, and no count reads more than
# this many index entries.
COUNT_CAP = 100_000


@dataclass(frozen=True)
class DashboardContext(OnPool):
    """Settings, the login-role pool (`db` sees every tenant's rows) and the sign-in state of
    one running dashboard."""

    settings: Settings
    auth: DashboardAuth
    # Seconds between two looks at the database for a page's live parts.
    refresh_seconds: float


def context_of(request: Request) -> DashboardContext:
    """The running dashboard's context."""
    found: DashboardContext = request.app.state.dashboard
    return found


def session_of(request: Request) -> Session | None:
    """The browser's session, from its cookie; None when it has none (or a stale one)."""
    return context_of(request).auth.session(request.cookies.get(COOKIE_NAME))


def client_of(request: Request) -> str | None:
    """The browser's address as the dashboard sees it."""
    return request.client.host if request.client else None


def page(
    request: Request,
    session: Session | None,
    template: str,
    *,
    status_code: int = 200,
    **values: Any,
) -> HTMLResponse:
    """A full page: `template` with what the layout needs (session, messages, the clock)."""
    values.setdefault("active", "")  # which entry of the menu is this page
    body = render(
        template,
        request=request,
        session=session,
        flashes=session.take_flashes() if session else [],
        now=datetime.now(UTC),
        **values,
    )
    return HTMLResponse(body, status_code=status_code)


class Missing(Exception):
    """What a page or an action names is not there: the app answers 404 with the error page."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title


def existing(value: T | None, title: str, message: str) -> T:
    """`value`; when it is None, `Missing` (a 404 page saying `title` and `message`)."""
    if value is None:
        raise Missing(title, message)
    return value


def refusal(request: Request, status_code: int, title: str, message: str) -> HTMLResponse:
    """An error page that changes nothing."""
    return page(request, None, "error.html", status_code=status_code, title=title, message=message)


def see_other(path: str, **query: Any) -> RedirectResponse:
    """A 303 to `path` (with `query`, values None left out): where a POST sends the browser."""
    kept = {k: v for k, v in query.items() if v is not None and v != ""}
    return RedirectResponse(f"{path}?{urlencode(kept)}" if kept else path, status_code=303)


async def audit(
    db: Database,
    request: Request,
    session: Session | None,
    action: str,
    target: dict[str, Any],
    outcome: dict[str, Any],
    *,
    actor: str | None = None,
) -> None:
    """One row of the audit trail: by the session's operator (the name they gave), or by
    `actor` for a browser that is not signed in; from the browser's address."""
    await operator_action_record(
        db,
        actor=actor or (session.actor if session else "(not signed in)"),
        client=client_of(request),
        session=session.audit_id if session else None,
        action=action,
        target=target,
        outcome=outcome,
    )


PageHandler = Callable[[Request, Session], Awaitable[Response]]


def operator_page(handler: PageHandler) -> Callable[[Request], Awaitable[Response]]:
    """A page for signed-in operators; anyone else is sent to the sign-in page."""

    @functools.wraps(handler)
    async def guarded(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return see_other("/login")
        return await handler(request, session)

    return guarded


class Form:
    """A posted ``application/x-www-form-urlencoded`` body."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        self._fields = fields

    def one(self, name: str) -> str | None:
        """The first value of `name`, None when absent."""
        values = self._fields.get(name)
        return values[0] if values else None

    def all(self, name: str) -> list[str]:
        """Every value of `name` (checkboxes)."""
        return list(self._fields.get(name, []))

    def items(self) -> list[tuple[str, str]]:
        """Every (name, value), for carrying a form through its confirmation."""
        return [(name, value) for name, values in self._fields.items() for value in values]


async def read_form(request: Request) -> Form | None:
    """The posted form; None when the body is not a form or too big."""
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return Form(parse_qs(text, keep_blank_values=True, max_num_fields=1000))


def same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        # Browsers send Origin with every POST; its absence means a non-browser client,
        # which still needs the cookie and the CSRF token.
        return origin is None
    host = request.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


ActionHandler = Callable[[Request, Session, Form], Awaitable[Response]]


def operator_action(handler: ActionHandler) -> Callable[[Request], Awaitable[Response]]:
    """A POST for signed-in operators that echoes their CSRF token; nothing else gets in."""

    @functools.wraps(handler)
    async def guarded(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return refusal(request, 401, "Not signed in", "Sign in to the dashboard first.")

        async def audit_refusal(reason: str) -> None:
            target = {"path": request.url.path}
            db = context_of(request).db
            await audit(db, request, session, "action_refused", target, {"refused": reason})

        if not same_origin(request):
            await audit_refusal("another_origin")
            return refusal(request, 403, "Refused", "This form was sent from another site.")
        form = await read_form(request)
        if form is None or not DashboardAuth.csrf_ok(session, form.one("csrf")):
            await audit_refusal("csrf")
            return refusal(
                request,
                403,
                "Refused",
                "The form's security token is missing or wrong (CSRF check); nothing was "
                "changed. Reload the page and try again.",
            )
        return await handler(request, session, form)

    return guarded


def path_id(request: Request, name: str) -> int:
    """A database id from the path (the route matched digits); InvalidInput when too big."""
    value = int(request.path_params[name])
    if value > 2**63 - 1:
        raise InvalidInput(f"{name}: {value} is not an id")
    return value


def int_or_none(text: str | None, what: str) -> int | None:
    """A positive whole number from a form or query field; None when empty."""
    if text is None or not text.strip():
        return None
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidInput(f"{what}: expected a whole number, got {text!r}") from None
    if value <= 0 or value > 2**63 - 1:
        raise InvalidInput(f"{what}: expected a positive number, got {text!r}")
    return value
