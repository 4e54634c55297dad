"""Who may use the dashboard: a one-time login link, optional password and token, sessions.

    auth = DashboardAuth(password=settings.dashboard_password, token=settings.dashboard_token)
    code = auth.issue_link()                # printed in the URL `smuves dashboard` shows
    auth.check_link(code, client="127.0.0.1")            # None, or why it is refused
    session = auth.sign_in(actor="ada", client="127.0.0.1", token=code)   # or password=…
    session = auth.session(cookie_value)    # None: no such session, or it expired
    auth.csrf_ok(session, form_value)

- The login link carries a random one-time code of this process, never a configured secret.
  It works once (the POST that signs in spends it: a GET of the link only shows the sign-in
  form, so a link previewer cannot spend it) and for `LINK_SECONDS` after it was issued;
  after that it is refused and a restart of `smuves dashboard` prints a new one.
- `SMUVES_DASHBOARD_TOKEN` (reusable) and `SMUVES_DASHBOARD_PASSWORD` are the ways in that
  survive a restart; off localhost one of them is required (`require_secret_off_localhost`).
  Both are typed into the sign-in form: the reusable token is refused in a link, where it
  would stay in browser histories and proxy logs.
- A session is a random id in an HttpOnly, SameSite=Strict cookie, kept in this process's
  memory for `SESSION_SECONDS`: a restart signs everybody out. Each session has its own CSRF
  token, which every form carries and every POST must echo.
- Every check of a secret counts (the link's GET as well as the form's POST): after
  `CLIENT_MAX_FAILURES` failures from one address within `FAILURE_WINDOW_SECONDS` that
  address is refused until the window has passed, and after `MAX_FAILURES` from all
  addresses together everybody is, so that a guess spread over many addresses stays bounded
  while one noisy address does not lock the operator out. The failures kept are bounded by
  `MAX_FAILURES` (a refused check is not checked, nor kept).
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
from enum import StrEnum

from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError

COOKIE_NAME = "smuves_dashboard"
SESSION_SECONDS = 12 * 3600
LINK_SECONDS = 15 * 60
CLIENT_MAX_FAILURES = 10
MAX_FAILURES = 100
FAILURE_WINDOW_SECONDS = 60.0
MIN_SECRET_LENGTH = 16


class SignInMethod(StrEnum):
    """What a browser signed in with."""

    LINK = "link"
    TOKEN = "token"
    PASSWORD = "password"


class Refused(StrEnum):
    """Why a sign-in (or a look at the login link) was refused."""

    THROTTLED = "throttled"  # too many failures lately: not even checked
    WRONG = "wrong"  # no password or token of ours
    EXPIRED = "expired"  # the login link's code, past LINK_SECONDS
    SPENT = "spent"  # the login link's code, used already
    TOKEN_IN_LINK = "token_in_link"  # the reusable token, in a URL

    @property
    def counted(self) -> bool:
        """Whether this refusal counts as a failure (a guess) towards the throttle."""
        return self not in (Refused.THROTTLED, Refused.TOKEN_IN_LINK)


@dataclass
class Session:
    """One signed-in browser."""

    id: str
    csrf: str
    actor: str
    client: str | None
    expires: float
    method: SignInMethod = SignInMethod.LINK
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


class _Failures:
    """Failed checks of the last window, per client address and in all."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._all: deque[tuple[float, str]] = deque()
        self._by_client: dict[str, int] = {}

    def _forget_old(self) -> None:
        oldest = self._clock() - FAILURE_WINDOW_SECONDS
        while self._all and self._all[0][0] < oldest:
            _, client = self._all.popleft()
            left = self._by_client[client] - 1
            if left:
                self._by_client[client] = left
            else:
                del self._by_client[client]

    def throttled(self, client: str) -> bool:
        """True while `client`, or everybody together, failed too often lately."""
        self._forget_old()
        return (
            len(self._all) >= MAX_FAILURES or self._by_client.get(client, 0) >= CLIENT_MAX_FAILURES
        )

    def add(self, client: str) -> None:
        """Count one failed check of `client`."""
        self._all.append((self._clock(), client))
        self._by_client[client] = self._by_client.get(client, 0) + 1


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
        """`login_token`: the first link's code (tests); `clock`: seconds, for expiries."""
        for name, secret in (
            ("SMUVES_DASHBOARD_PASSWORD", password),
            ("SMUVES_DASHBOARD_TOKEN", token),
        ):
            if secret is not None and len(secret.get_secret_value()) < MIN_SECRET_LENGTH:
                raise ConfigurationError(
                    f"{name} must be at least {MIN_SECRET_LENGTH} characters long"
                )
        self._password = password
        self._token = token
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._failures = _Failures(clock)
        self._link = ""
        self._link_expires = 0.0
        self._link_spent = False
        self.issue_link(login_token)

    @property
    def has_password(self) -> bool:
        """True when a password was configured (the sign-in page then asks for it)."""
        return self._password is not None

    @property
    def has_token(self) -> bool:
        """True when a reusable token was configured (the sign-in page then asks for it)."""
        return self._token is not None

    def issue_link(self, code: str | None = None) -> str:
        """A new login link's code, valid once and for LINK_SECONDS from now; the previous
        link stops working."""
        self._link = code or secrets.token_urlsafe(24)
        self._link_expires = self._clock() + LINK_SECONDS
        self._link_spent = False
        return self._link

    def _link_refusal(self, code: str) -> Refused | None:
        """None for the live link's code; why not for the link's spent or expired code;
        WRONG for anything else."""
        if not code or not _same(code, self._link):
            return Refused.WRONG
        if self._link_spent:
            return Refused.SPENT
        if self._clock() >= self._link_expires:
            return Refused.EXPIRED
        return None

    def _token_ok(self, token: str) -> bool:
        return (
            self._token is not None and bool(token) and _same(token, self._token.get_secret_value())
        )

    def _password_ok(self, password: str) -> bool:
        return (
            self._password is not None
            and bool(password)
            and _same(password, self._password.get_secret_value())
        )

    def _refuse(self, refused: Refused, client: str) -> Refused:
        if refused.counted:
            self._failures.add(client)
        return refused

    def check_link(self, code: str, *, client: str | None) -> Refused | None:
        """None when `code` is the live login link's (the link shows the sign-in form); why
        not otherwise. Counts towards the throttle like a sign-in."""
        who = client or ""
        if self._failures.throttled(who):
            return Refused.THROTTLED
        if self._token_ok(code):
            return Refused.TOKEN_IN_LINK
        refused = self._link_refusal(code)
        return None if refused is None else self._refuse(refused, who)

    def sign_in(
        self, *, actor: str, client: str | None, token: str = "", password: str = ""
    ) -> Session | Refused:
        """A new session for the live link's code, the configured token or the password (the
        link's code is spent); why not otherwise."""
        who = client or ""
        if self._failures.throttled(who):
            return Refused.THROTTLED
        if self._token_ok(token):
            method = SignInMethod.TOKEN
        elif token:
            refused = self._link_refusal(token)
            if refused is not None:
                return self._refuse(refused, who)
            self._link_spent = True
            method = SignInMethod.LINK
        elif self._password_ok(password):
            method = SignInMethod.PASSWORD
        else:
            return self._refuse(Refused.WRONG, who)
        session = Session(
            id=secrets.token_urlsafe(32),
            csrf=secrets.token_urlsafe(32),
            actor=actor,
            client=client,
            expires=self._clock() + SESSION_SECONDS,
            method=method,
        )
        self._sessions[session.id] = session
        return session

    def throttled(self, client: str | None) -> bool:
        """True while sign-ins from `client` are refused unchecked."""
        return self._failures.throttled(client or "")

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
