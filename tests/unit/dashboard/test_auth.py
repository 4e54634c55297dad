"""Sessions and the login link, with an injected clock."""

from __future__ import annotations

from pydantic import SecretStr

from smuves_sync.dashboard.auth import (
    FAILURE_WINDOW_SECONDS,
    MAX_FAILURES,
    SESSION_SECONDS,
    DashboardAuth,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_expires_and_its_csrf_token_is_its_own() -> None:
    clock = Clock()
    auth = DashboardAuth(login_token="link", clock=clock)
    session = auth.sign_in(actor="ada", client="127.0.0.1", token="link")
    assert session is not None and auth.session(session.id) is session
    assert auth.csrf_ok(session, session.csrf) and not auth.csrf_ok(session, "x")
    assert not auth.csrf_ok(session, None)
    assert session.audit_id not in session.id and len(session.audit_id) == 16

    clock.now += SESSION_SECONDS
    assert auth.session(session.id) is None


def test_the_login_link_works_once_and_failures_lock_out_for_a_while() -> None:
    clock = Clock()
    auth = DashboardAuth(login_token="link", password=SecretStr("p" * 16), clock=clock)
    assert auth.sign_in(actor="a", client=None, token="link") is not None
    assert auth.sign_in(actor="b", client=None, token="link") is None
    for _ in range(MAX_FAILURES - 1):
        assert auth.sign_in(actor="e", client=None, password="wrong") is None
    assert auth.locked_out()
    assert auth.sign_in(actor="a", client=None, password="p" * 16) is None

    clock.now += FAILURE_WINDOW_SECONDS + 1
    assert not auth.locked_out()
    assert auth.sign_in(actor="a", client=None, password="p" * 16) is not None


def test_flashes_are_shown_once() -> None:
    auth = DashboardAuth(login_token="link")
    session = auth.sign_in(actor="a", client=None, token="link")
    assert session is not None
    session.flash("ok", "done")
    assert session.take_flashes() == [("ok", "done")]
    assert session.take_flashes() == []
