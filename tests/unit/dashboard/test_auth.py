"""Sessions, the login link and the sign-in throttle, with an injected clock."""

from __future__ import annotations

from pydantic import SecretStr

from smuves_sync.dashboard.auth import (
    CLIENT_MAX_FAILURES,
    FAILURE_WINDOW_SECONDS,
    LINK_SECONDS,
    MAX_FAILURES,
    SESSION_SECONDS,
    DashboardAuth,
    Refused,
    Session,
    SignInMethod,
)

PASSWORD = "p" * 16
TOKEN = "t" * 16


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _session(signed: Session | Refused) -> Session:
    assert isinstance(signed, Session), signed
    return signed


def test_a_session_expires_and_its_csrf_token_is_its_own() -> None:
    clock = Clock()
    auth = DashboardAuth(login_token="link", clock=clock)
    session = _session(auth.sign_in(actor="ada", client="127.0.0.1", token="link"))
    assert auth.session(session.id) is session and session.method is SignInMethod.LINK
    assert auth.csrf_ok(session, session.csrf) and not auth.csrf_ok(session, "x")
    assert not auth.csrf_ok(session, None)
    assert session.audit_id not in session.id and len(session.audit_id) == 16

    clock.now += SESSION_SECONDS
    assert auth.session(session.id) is None


def test_the_login_link_works_once_and_only_within_its_minutes() -> None:
    clock = Clock()
    auth = DashboardAuth(login_token="link", clock=clock)
    assert auth.check_link("link", client="a") is None
    _session(auth.sign_in(actor="a", client="a", token="link"))
    assert auth.sign_in(actor="b", client="a", token="link") is Refused.SPENT
    assert auth.check_link("link", client="a") is Refused.SPENT

    code = auth.issue_link()
    assert code != "link" and auth.check_link("link", client="a") is Refused.WRONG
    clock.now += LINK_SECONDS - 1
    assert auth.check_link(code, client="a") is None
    clock.now += 1
    assert auth.check_link(code, client="a") is Refused.EXPIRED
    assert auth.sign_in(actor="a", client="a", token=code) is Refused.EXPIRED
    # The one the next start prints works again.
    _session(auth.sign_in(actor="a", client="a", token=auth.issue_link()))


def test_one_address_failing_is_throttled_alone_until_the_window_passes() -> None:
    clock = Clock()
    auth = DashboardAuth(login_token="link", password=SecretStr(PASSWORD), clock=clock)
    for _ in range(CLIENT_MAX_FAILURES):
        assert auth.sign_in(actor="e", client="10.0.0.66", password="wrong") is Refused.WRONG
    assert auth.throttled("10.0.0.66")
    # Not even the right password is checked from there, nor the link looked at.
    assert auth.sign_in(actor="e", client="10.0.0.66", password=PASSWORD) is Refused.THROTTLED
    assert auth.check_link("link", client="10.0.0.66") is Refused.THROTTLED
    # The operator elsewhere is not locked out.
    assert not auth.throttled("127.0.0.1")
    _session(auth.sign_in(actor="ada", client="127.0.0.1", password=PASSWORD))

    clock.now += FAILURE_WINDOW_SECONDS + 1
    assert not auth.throttled("10.0.0.66")
    _session(auth.sign_in(actor="e", client="10.0.0.66", password=PASSWORD))


def test_looking_at_links_counts_like_signing_in() -> None:
    auth = DashboardAuth(login_token="link", clock=Clock())
    for n in range(CLIENT_MAX_FAILURES):
        assert auth.check_link(f"guess-{n}", client="10.0.0.66") is Refused.WRONG
    assert auth.check_link("link", client="10.0.0.66") is Refused.THROTTLED
    assert auth.sign_in(actor="e", client="10.0.0.66", token="link") is Refused.THROTTLED


def test_failures_from_many_addresses_together_throttle_everybody() -> None:
    clock = Clock()
    auth = DashboardAuth(password=SecretStr(PASSWORD), clock=clock)
    for n in range(MAX_FAILURES):
        assert auth.sign_in(actor="e", client=f"10.1.{n}.1", password="x") is Refused.WRONG
    assert auth.throttled("127.0.0.1")
    assert auth.sign_in(actor="ada", client="127.0.0.1", password=PASSWORD) is Refused.THROTTLED

    clock.now += FAILURE_WINDOW_SECONDS + 1
    _session(auth.sign_in(actor="ada", client="127.0.0.1", password=PASSWORD))


def test_the_reusable_token_signs_in_from_the_form_never_from_a_link() -> None:
    auth = DashboardAuth(token=SecretStr(TOKEN), clock=Clock())
    for _ in range(CLIENT_MAX_FAILURES + 1):
        assert auth.check_link(TOKEN, client="a") is Refused.TOKEN_IN_LINK
    # Not counted as guesses: whoever has it in a link has the token.
    assert not auth.throttled("a")
    for _ in range(2):
        assert _session(auth.sign_in(actor="a", client="a", token=TOKEN)).method is (
            SignInMethod.TOKEN
        )


def test_flashes_are_shown_once() -> None:
    auth = DashboardAuth(login_token="link")
    session = _session(auth.sign_in(actor="a", client=None, token="link"))
    session.flash("ok", "done")
    assert session.take_flashes() == [("ok", "done")]
    assert session.take_flashes() == []
