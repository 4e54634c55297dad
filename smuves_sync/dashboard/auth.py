"""Who may use the dashboard: a one-time login link, optional password and token, sessions.

    auth = DashboardAuth(password=settings.dashboard_password, token=settings.dashboard_token)
    auth.login_token                       # printed once, in the URL `smuves dashboard` shows
    auth.token_accepted(token)             # the link (unused) or the configured token
    session = auth.sign_in(actor="ada", client="127.0.0.1", token=token)   # or password=…
    session = auth.session(cookie_value)   # None: no such session, or it expired
    auth.csrf_ok(session, form_value)

- The login link's token works once: the POST that signs in spends it (a GET of the link
  only shows the sign-in form, so a link previewer cannot spend it). A new one comes with a
  restart. `SMUVES_DASHBOARD_TOKEN` (reusable) and `SMUVES_DASHBOARD_PASSWORD` are the ways
  in that survive a restart; off localhost one of them is required (`require_secret_off_
  localhost`).
- A session is a random id in an HttpOnly, SameSite=Strict cookie, kept in this process's
  memory for `SESSION_SECONDS`: a restart signs everybody out. Each session has its own CSRF
  token, which every form carries and every POST must echo.
- Sign-in failures are limited: after `MAX_FAILURES` within `FAILURE_WINDOW_SECONDS` every
  sign-in is refused until the window has passed.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError

COOKIE_NAME = "smuves_dashboard"
SESSION_SECONDS = 12 * 3600
MAX_FAILURES = 10
FAILURE_WINDOW_SECONDS = 60.0
MIN_SECRET_LENGTH = 16


@dataclass
class Session:
    """One signed-in browser."""

    id: str
    csrf: str
    actor: str
    client: str | None
    expires: float
    # Messages for the next page this browser sees: (level, text), level "ok" or "error".
    flashes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def audit_id(self) -> str:
        """An id for the audit trail that does not reveal the cookie."""
        return hashlib.sha256(self.id.encode()).hexdigest()[:16]

    def flash(self, level: str, text: str) -> None:
        """Keep a message for the next page."""
        self.flashes.append((level, text))

    def take_flashes(self) -> list[tuple[str, str]]:
        """The kept messages, forgotten once taken."""
        taken, self.flashes = self.flashes, []
        return taken


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


class DashboardAuth:
    """The login link, the configured secrets and the live sessions of one dashboard."""

    def __init__(
        self,
        *,
        password: SecretStr | None = None,
        token: SecretStr | None = None,
        login_token: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, secret in (
            ("SMUVES_DASHBOARD_PASSWORD", password),
            ("SMUVES_DASHBOARD_TOKEN", token),
        ):
            if secret is not None and len(secret.get_secret_value()) < MIN_SECRET_LENGTH:
                raise ConfigurationError(
                    f"{name} must be at least {MIN_SECRET_LENGTH} characters long"
                )
        self.login_token = login_token or secrets.token_urlsafe(24)
        self._login_token_spent = False
        self._password = password
        self._token = token
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._failures: deque[float] = deque()

    @property
    def has_password(self) -> bool:
        """True when a password was configured (the sign-in page then asks for it)."""
        return self._password is not None

    def token_accepted(self, token: str) -> bool:
        """True for the unspent login link's token or the configured token."""
        if not token:
            return False
        if not self._login_token_spent and _same(token, self.login_token):
            return True
        return self._token is not None and _same(token, self._token.get_secret_value())

    def password_accepted(self, password: str) -> bool:
        """True for the configured password."""
        return (
            self._password is not None
            and bool(password)
            and _same(password, self._password.get_secret_value())
        )

    def locked_out(self) -> bool:
        """True while too many sign-ins failed lately."""
        now = self._clock()
        while self._failures and self._failures[0] < now - FAILURE_WINDOW_SECONDS:
            self._failures.popleft()
        return len(self._failures) >= MAX_FAILURES

    def sign_in(
        self, *, actor: str, client: str | None, token: str = "", password: str = ""
    ) -> Session | None:
        """A new session for a right token or password (the login link's is spent); None
        for a wrong one, or while locked out."""
        if self.locked_out():
            return None
        if self.token_accepted(token):
            if _same(token, self.login_token):
                self._login_token_spent = True
        elif not self.password_accepted(password):
            self._failures.append(self._clock())
            return None
        session = Session(
            id=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(32),
            actor=actor,
            client=client,
            expires=self._clock() + SESSION_SECONDS,
        )
        self._sessions[session.id] = session
        return session

    def session(self, session_id: str | None) -> Session | None:
        """The live session with this id; None when unknown or expired."""
        if not session_id:
            return None
        found = self._sessions.get(session_id)
        if found is None:
            return None
        if found.expires <= self._clock():
            del self._sessions[session_id]
            return None
        return found

    def sign_out(self, session_id: str) -> None:
        """End the session (nothing happens for an unknown id)."""
        self._sessions.pop(session_id, None)

    @staticmethod
    def csrf_ok(session: Session, given: str | None) -> bool:
        """True when a form echoed the session's CSRF token."""
        return given is not None and _same(given, session.csrf)


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ConfigurationError(f"--host {host!r}: {error}") from error
    return all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def require_secret_off_localhost(
    host: str, password: SecretStr | None, token: SecretStr | None
) -> None:
    """ConfigurationError when bound beyond localhost without a password or a token."""
    if password is None and token is None and not is_loopback(host):
        raise ConfigurationError(
            f"the dashboard would listen on {host}, beyond this machine: set "
            "SMUVES_DASHBOARD_PASSWORD or SMUVES_DASHBOARD_TOKEN (16 characters or more), "
            "or bind to 127.0.0.1"
        )
