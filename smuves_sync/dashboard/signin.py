"""Signing in and out of the dashboard: the sign-in form, the session cookie, signing out.

An operator signs in with the login link's token (`smuves dashboard` prints it; looking at
the form does not spend it) or the password, and gives the name the audit trail records.
Who may sign in, and how many failures are allowed, is `auth`; the session cookie is
HttpOnly, SameSite=Strict, and Secure over https.
"""

from __future__ import annotations

import getpass

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.dashboard.auth import COOKIE_NAME, SESSION_SECONDS, Session
from smuves_sync.dashboard.web import (
    Form,
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


async def login_page(request: Request) -> Response:
    """The sign-in form: for the login link's token (not spent by looking) or a password."""
    if session_of(request) is not None:
        return see_other("/")
    auth = context_of(request).auth
    token = request.query_params.get("token", "")
    accepted = auth.token_accepted(token)
    problem = None
    if token and not accepted:
        problem = (
            "this link is not valid or was used already; restart `smuves dashboard` for a new "
            "one" + (", or sign in with the password" if auth.has_password else "")
        )
    return page(
        request,
        None,
        "login.html",
        status_code=401 if problem else 200,
        token=token if accepted else "",
        one_time=token == auth.login_token,
        has_password=auth.has_password,
        actor=_default_actor(),
        problem=problem,
    )


async def login(request: Request) -> Response:
    """Sign in with the link's token or the password: a session cookie, then the overview."""
    ctx = context_of(request)
    form = await read_form(request)
    if form is None:
        return refusal(request, 400, "Bad request", "The sign-in form was not sent as a form.")
    if not same_origin(request):
        return refusal(request, 403, "Refused", "This form was sent from another site.")
    if ctx.auth.locked_out():
        return refusal(
            request, 429, "Too many attempts", "Too many failed sign-ins; wait a minute."
        )
    actor = " ".join((form.one("actor") or "").split())[:100] or "operator"
    session = ctx.auth.sign_in(
        actor=actor,
        client=client_of(request),
        token=form.one("token") or "",
        password=form.one("password") or "",
    )
    if session is None:
        return page(
            request,
            None,
            "login.html",
            status_code=401,
            token="",
            one_time=False,
            has_password=ctx.auth.has_password,
            actor=actor,
            problem="wrong password or token, or the link was used already",
        )
    response = see_other("/")
    response.set_cookie(
        COOKIE_NAME,
        session.id,
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
    context_of(request).auth.sign_out(session.id)
    response = see_other("/login")
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
    return response
