"""A dashboard button's confirmation: the page that says what it will do, and the single-use
nonce that alone lets its Confirm act.

The nonce is stored in the database (`dashboard_confirmations`), bound to the session, the
action and its target, for `CONFIRMATION_TTL`; the action spends it in the transaction that
acts (`when_confirmed`), so a replay, a forged form or a second click acts not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.dashboard.auth import Session
from smuves_sync.dashboard.web import Form, audit, context_of, page
from smuves_sync.db import Database
from smuves_sync.db.dashboard_confirmations import (
    dashboard_confirmation_consume,
    dashboard_confirmation_issue,
)

T = TypeVar("T")

# How long a confirmation page may be acted on.
CONFIRMATION_TTL = timedelta(minutes=10)
# The form field that carries a confirmation page's nonce.
CONFIRMATION_FIELD = "confirmation"


def back_to(form: Form, default: str) -> str:
    """Where to send the browser afterwards: a path of this dashboard only (browsers read
    `//host` and `/\\host` as another site)."""
    back = form.one("back") or ""
    if not back.startswith("/") or back.startswith("//") or "\\" in back:
        return default
    if any(ord(c) < 0x20 for c in back):
        return default
    return back


async def confirmation_page(
    request: Request,
    session: Session,
    action: str,
    target: dict[str, Any],
    *,
    heading: str,
    description: str,
    button: str,
    back: str,
    items: Sequence[str] = (),
    warning: str | None = None,
    fields: Sequence[tuple[str, str]] = (),
    form: Form | None = None,
) -> Response:
    """The page that says what a button will do, with a new nonce for `action` on `target`;
    its Confirm posts `fields` and the nonce back here. `form`: the POST that asked, which
    says whether it brought a nonce that was refused."""
    nonce = await dashboard_confirmation_issue(
        context_of(request).db,
        session=session.audit_id,
        action=action,
        target=target,
        ttl=CONFIRMATION_TTL,
    )
    return page(
        request,
        session,
        "confirm.html",
        heading=heading,
        description=description,
        items=list(items),
        warning=warning,
        action=request.url.path,
        fields=list(fields),
        nonce=nonce,
        nonce_field=CONFIRMATION_FIELD,
        minutes=int(CONFIRMATION_TTL.total_seconds() // 60),
        refused=form is not None and bool(form.one(CONFIRMATION_FIELD)),
        button=button,
        back=back,
    )


async def when_confirmed(
    request: Request,
    session: Session,
    form: Form,
    action: str,
    target: dict[str, Any],
    act: Callable[[Database], Awaitable[T]],
) -> T | None:
    """What `act` returns, run in the transaction that spends the form's nonce for `action`
    on `target`; None, and nothing done, when the form has no valid one (a nonce that was
    given but refused is audited)."""
    nonce = form.one(CONFIRMATION_FIELD)
    if not nonce:
        return None
    db = context_of(request).db
    async with db.transaction() as tx:
        spent = await dashboard_confirmation_consume(
            tx, nonce, session=session.audit_id, action=action, target=target
        )
        if spent:
            return await act(tx)
    refused = {"path": request.url.path, "action": action, **target}
    await audit(db, request, session, "action_refused", refused, {"refused": "confirmation"})
    return None
