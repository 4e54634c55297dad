"""Who gets into the dashboard: the one-time link (and its minutes), password, token, cookie,
CSRF, origin; the sign-in throttle per address; the audit of signing in and out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from starlette.applications import Starlette

from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.dashboard.auth import (
    CLIENT_MAX_FAILURES,
    COOKIE_NAME,
    LINK_SECONDS,
    require_secret_off_localhost,
)
from smuves_sync.db import Database, Pool
from smuves_sync.db.jobs import job_get
from smuves_sync.db.operator_actions import OperatorAction, operator_action_recent
from smuves_sync.errors import ConfigurationError
from smuves_sync.models import JobStatus
from smuves_sync.settings import Settings
from tests.integration.dashboard.conftest import (
    LOGIN_TOKEN,
    Clock,
    browser_at,
    csrf_of,
    post_form,
    sign_in,
)
from tests.support.factories import Factory

PASSWORD = "correct horse battery staple"
TOKEN = "a-configured-token-for-the-dashboard"


@pytest.fixture
def guarded_app(settings: Settings, admin_pool: Pool) -> Starlette:
    """A dashboard with a password and a configured token as well as the login link."""
    auth = DashboardAuth(
        password=SecretStr(PASSWORD), token=SecretStr(TOKEN), login_token=LOGIN_TOKEN
    )
    return create_dashboard_app(settings, pool=admin_pool, auth=auth)


@pytest.fixture
async def guarded(guarded_app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """A browser of `guarded_app` at 10.0.0.7."""
    async with browser_at(guarded_app, "10.0.0.7") as client:
        yield client


async def _audit(db: Database) -> list[OperatorAction]:
    """The audit trail, oldest first."""
    return (await operator_action_recent(db))[::-1]


async def _still_failed(db: Database, job_id: int) -> bool:
    """Whether the job is failed still: the refused press requeued nothing."""
    after = await job_get(db, job_id)
    return after is not None and after.status is JobStatus.FAILED


async def test_the_login_link_shows_a_form_and_signs_in_once(dashboard: httpx.AsyncClient) -> None:
    link = f"/login?token={LOGIN_TOKEN}"
    # Looking at the link (a link previewer, a reload) does not spend it.
    for _ in range(2):
        shown = await dashboard.get(link)
        assert shown.status_code == 200
        assert f'value="{LOGIN_TOKEN}"' in shown.text
        assert "self-declared" in shown.text

    signed = await dashboard.post("/login", data={"token": LOGIN_TOKEN, "actor": "Ada L."})

    assert signed.status_code == 303 and signed.headers["location"] == "/"
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on localhost; set behind https
    overview = await dashboard.get("/")
    assert overview.status_code == 200 and "Sign out" in overview.text
    assert "Ada L., self-declared" in overview.text

    dashboard.cookies.clear()
    again = await dashboard.post("/login", data={"token": LOGIN_TOKEN, "actor": "Eve"})
    assert again.status_code == 401 and COOKIE_NAME not in again.headers.get("set-cookie", "")
    spent = await dashboard.get(link)
    assert spent.status_code == 401 and "used already" in spent.text


async def test_without_the_cookie_nothing_is_shown_or_changed(
    dashboard: httpx.AsyncClient, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.FAILED, last_error="secret-looking error")
    for path in ("/", "/runs", f"/runs/{job.run_id}", "/dead-letter", "/portals"):
        response = await dashboard.get(path)
        assert response.status_code == 303 and response.headers["location"] == "/login", path
    for path in ("/events/overview", f"/runs/{job.run_id}/events"):
        assert (await dashboard.get(path)).status_code == 401

    refused = await post_form(dashboard, "/dead-letter/retry", "any", only=job.id, confirmed="yes")

    assert refused.status_code == 401
    assert "secret-looking" not in refused.text
    assert await _still_failed(db, job.id)


async def test_a_wrong_or_missing_csrf_token_changes_nothing(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.FAILED)
    for csrf in ("not-the-token", None, ""):
        response = await post_form(
            dashboard, "/dead-letter/retry", csrf, only=job.id, confirmed="yes"
        )
        assert response.status_code == 403, csrf
        assert "CSRF" in response.text
    assert await _still_failed(db, job.id)
    refusals = [r for r in await _audit(db) if r.action == "action_refused"]
    assert [(r.actor, r.target, r.outcome) for r in refusals] == [
        ("ada", {"path": "/dead-letter/retry"}, {"refused": "csrf"})
    ] * 3


async def test_a_form_from_another_origin_is_refused(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.FAILED)

    response = await dashboard.post(
        "/dead-letter/retry",
        data={"csrf": signed_in, "only": str(job.id), "confirmed": "yes"},
        headers={"Origin": "https://evil.example"},
    )

    assert response.status_code == 403
    assert await _still_failed(db, job.id)


async def test_signing_out_ends_the_session(dashboard: httpx.AsyncClient, signed_in: str) -> None:
    out = await post_form(dashboard, "/logout", signed_in)

    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert (await dashboard.get("/")).status_code == 303


async def test_password_and_configured_token_both_sign_in_repeatedly(
    guarded: httpx.AsyncClient,
) -> None:
    form = (await guarded.get("/login")).text
    assert 'type="password"' in form

    assert (
        await guarded.post("/login", data={"password": PASSWORD, "actor": "ada"})
    ).status_code == 303
    guarded.cookies.clear()
    for _ in range(2):  # the configured token is not spent
        assert (await sign_in(guarded, token=TOKEN)) != ""
        guarded.cookies.clear()
    form = (await guarded.get("/login")).text
    assert 'name="token"' in form and 'type="password"' in form
    # The reusable token in a link (browser history, proxy logs) is refused and named.
    in_link = await guarded.get(f"/login?token={TOKEN}")
    assert in_link.status_code == 401 and "not accepted in a link" in in_link.text
    assert f'value="{TOKEN}"' not in in_link.text


async def test_one_address_failing_does_not_lock_out_another(guarded_app: Starlette) -> None:
    async with browser_at(guarded_app, "10.0.0.66") as noisy:
        for _ in range(CLIENT_MAX_FAILURES):
            wrong = await noisy.post("/login", data={"password": "guess", "actor": "eve"})
            assert wrong.status_code == 401
        locked = await noisy.post("/login", data={"password": PASSWORD, "actor": "eve"})
        assert locked.status_code == 429 and "Wait a minute" in locked.text
        assert COOKIE_NAME not in locked.headers.get("set-cookie", "")
    async with browser_at(guarded_app, "10.0.0.7") as operator:
        signed = await operator.post("/login", data={"password": PASSWORD, "actor": "ada"})
        assert signed.status_code == 303


async def test_looking_at_links_is_counted_and_throttled_too(guarded_app: Starlette) -> None:
    async with browser_at(guarded_app, "10.0.0.66") as noisy:
        for n in range(CLIENT_MAX_FAILURES):
            guess = await noisy.get(f"/login?token=guess-{n}")
            assert guess.status_code == 401 and "not valid" in guess.text
        # Now not even the right code is looked at.
        right = await noisy.get(f"/login?token={LOGIN_TOKEN}")
        assert right.status_code == 429 and f'value="{LOGIN_TOKEN}"' not in right.text
        assert (await noisy.post("/login", data={"token": LOGIN_TOKEN})).status_code == 429
    async with browser_at(guarded_app, "127.0.0.1") as operator:
        assert await sign_in(operator) != ""


async def test_the_link_expires_fifteen_minutes_after_it_was_printed(
    dashboard: httpx.AsyncClient, clock: Clock
) -> None:
    link = f"/login?token={LOGIN_TOKEN}"
    clock.now += LINK_SECONDS - 1
    assert (await dashboard.get(link)).status_code == 200

    clock.now += 1
    expired = await dashboard.get(link)
    assert expired.status_code == 401
    assert "has expired" in expired.text and "restart `smuves dashboard`" in expired.text
    assert f'value="{LOGIN_TOKEN}"' not in expired.text
    posted = await dashboard.post("/login", data={"token": LOGIN_TOKEN, "actor": "ada"})
    assert posted.status_code == 401 and "has expired" in posted.text
    assert COOKIE_NAME not in posted.headers.get("set-cookie", "")


async def test_signing_in_failing_and_signing_out_are_audited(
    guarded: httpx.AsyncClient, db: Database
) -> None:
    await guarded.get("/login?token=a-guess")
    await guarded.post("/login", data={"password": "wrong-guess", "actor": "eve"})
    csrf = await sign_in(guarded, actor="ada", token=TOKEN)
    await post_form(guarded, "/logout", csrf)

    rows = await _audit(db)
    assert [(r.action, r.actor, r.client) for r in rows] == [
        ("sign_in_failed", "(not signed in)", "10.0.0.7"),
        ("sign_in_failed", "eve", "10.0.0.7"),
        ("sign_in", "ada", "10.0.0.7"),
        ("sign_out", "ada", "10.0.0.7"),
    ]
    assert [r.target for r in rows] == [
        {"method": "link"},
        {"method": "password"},
        {"method": "token"},
        {},
    ]
    assert rows[0].outcome == rows[1].outcome == {"refused": "wrong"}
    assert rows[2].session and rows[2].session == rows[3].session
    # No secret, guessed or right, is written down.
    for secret in ("a-guess", "wrong-guess", TOKEN, csrf):
        assert all(secret not in str(r) for r in rows)


async def test_every_response_carries_timing_and_protective_headers(
    dashboard: httpx.AsyncClient, signed_in: str
) -> None:
    page = await dashboard.get("/runs")
    assert page.headers["server-timing"].startswith("app;dur=")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert csrf_of(page.text) == signed_in
    script = await dashboard.get("/static/vendor/htmx-2.0.11.min.js")
    assert script.status_code == 200 and "private" in script.headers["cache-control"]


def test_listening_beyond_localhost_needs_a_password_or_a_token() -> None:
    for host in ("127.0.0.1", "localhost", "::1"):
        require_secret_off_localhost(host, None, None)
    with pytest.raises(ConfigurationError, match="SMUVES_DASHBOARD_PASSWORD"):
        require_secret_off_localhost("0.0.0.0", None, None)
    require_secret_off_localhost("0.0.0.0", SecretStr(PASSWORD), None)
    require_secret_off_localhost("0.0.0.0", None, SecretStr(TOKEN))
    with pytest.raises(ConfigurationError, match="at least 16"):
        DashboardAuth(password=SecretStr("short"))
