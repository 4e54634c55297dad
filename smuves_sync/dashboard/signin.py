"""Signing in and out of the dashboard: the sign-in form, the session cookie, signing out.

An operator signs in with the login link's code (`smuves dashboard` prints it; looking at
the form does not spend it), the configured token or the password, and gives the name the
audit trail records (self-declared: nothing checks it). Who may sign in, how long a link
lasts and how many failures are allowed is `auth`; the session cookie is HttpOnly,
SameSite=Strict, and Secure over https. Sign-ins, failed ones and sign-outs are written to
the audit trail (`operator_actions`); a throttled attempt is not (it was not even checked,
and writing each would let anybody fill the table).
"""

from __future__ import annotations

import getpass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.dashboard.auth import (
    COOKIE_NAME,
    LINK_SECONDS,
    SESSION_SECONDS,
    Refused,
    Session,
)
from smuves_sync.dashboard.web import (
    Form,
    audit,
    client_of,
    context_of,
    operator_action,
    page,
    read_form,
    refusal,
    same_origin,
    see_other,
    session_of,
)


def _default_actor() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


def _problem(refused: Refused, *, has_password: bool, in_link: bool) -> str:
    """What the sign-in page says about a refusal."""
    other = ", or sign in with the password" if has_password else ""
    new_link = f"restart `smuves dashboard`: it prints a new link{other}"
    if refused is Refused.THROTTLED:
        return (
            "too many failed sign-ins lately (from your address, or from everywhere "
            "together); nothing was checked. Wait a minute and try again"
        )
    if refused is Refused.EXPIRED:
        return (
            f"this sign-in link has expired: a link works for {LINK_SECONDS // 60} minutes "
            f"after `smuves dashboard` prints it. For a new one, {new_link}"
        )
    if refused is Refused.SPENT:
        return f"this link was used already (each signs in one browser once); {new_link}"
    if refused is Refused.TOKEN_IN_LINK:
        return (
            "SMUVES_DASHBOARD_TOKEN is not accepted in a link, where it would stay in browser "
            "histories and logs: type it into the form below"
        )
    if in_link:
        return f"this link is not valid; {new_link}"
    return "wrong password or token"


def _form(
    request: Request,
    *,
    token: str = "",
    actor: str | None = None,
    refused: Refused | None = None,
    in_link: bool = False,
) -> Response:
    auth = context_of(request).auth
    problem = (
        None
        if refused is None
        else _problem(refused, has_password=auth.has_password, in_link=in_link)
    )
    status = 200 if refused is None else 429 if refused is Refused.THROTTLED else 401
    return page(
        request,
        None,
        "login.html",
        status_code=status,
        token=token,
        has_password=auth.has_password,
        has_token=auth.has_token,
        link_minutes=LINK_SECONDS // 60,
        actor=actor or _default_actor(),
        problem=problem,
    )


async def _audit_refusal(
    request: Request, actor: str | None, method: str, refused: Refused
) -> None:
    if not refused.counted:
        return
    target: dict[str, Any] = {"method": method}
    await audit(
        context_of(request).db,
        request,
        None,
        "sign_in_failed",
        target,
        {"refused": str(refused)},
        actor=actor,
    )


async def login_page(request: Request) -> Response:
    """The sign-in form; with the login link's code (not spent by looking) ready to send."""
    if session_of(request) is not None:
        return see_other("/")
    code = request.query_params.get("token", "")
    if not code:
        return _form(request)
    refused = context_of(request).auth.check_link(code, client=client_of(request))
    if refused is None:
        return _form(request, token=code)
    await _audit_refusal(request, None, "link", refused)
    return _form(request, refused=refused, in_link=True)


async def login(request: Request) -> Response:
    """Sign in with the link's code, the token or the password: a session cookie, then the
    overview."""
    ctx = context_of(request)
    form = await read_form(request)
    if form is None:
        return refusal(request, 400, "Bad request", "The sign-in form was not sent as a form.")
    if not same_origin(request):
        return refusal(request, 403, "Refused", "This form was sent from another site.")
    actor = " ".join((form.one("actor") or "").split())[:100] or "operator"
    token = form.one("token") or ""
    signed = ctx.auth.sign_in(
        actor=actor,
        client=client_of(request),
        token=token,
        password=form.one("password") or "",
    )
    if isinstance(signed, Refused):
        await _audit_refusal(request, actor, "token" if token else "password", signed)
        return _form(request, actor=actor, refused=signed)
    await audit(ctx.db, request, signed, "sign_in", {"method": str(signed.method)}, {})
    response = see_other("/")
    response.set_cookie(
        COOKIE_NAME,
        signed.id,
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@operator_action
async def logout(request: Request, session: Session, form: Form) -> Response:
    """End this browser's session."""
    ctx = context_of(request)
    ctx.auth.sign_out(session.id)
    await audit(ctx.db, request, session, "sign_out", {}, {})
    response = see_other("/login")
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
    return response
