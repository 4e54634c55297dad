"""Who gets into the dashboard: the one-time link, password, token, cookie, CSRF, origin."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.dashboard.auth import COOKIE_NAME, MAX_FAILURES, require_secret_off_localhost
from smuves_sync.db import Database, Pool
from smuves_sync.db.jobs import job_get
from smuves_sync.errors import ConfigurationError
from smuves_sync.models import JobStatus
from smuves_sync.settings import Settings
from tests.factories import Factory
from tests.integration.dashboard.conftest import (
    BASE_URL,
    LOGIN_TOKEN,
    csrf_of,
    post_form,
    sign_in,
)

PASSWORD = "correct horse battery staple"
TOKEN = "a-configured-token-for-the-dashboard"


@pytest.fixture
async def guarded(settings: Settings, admin_pool: Pool) -> AsyncIterator[httpx.AsyncClient]:
    """A dashboard with a password and a configured token as well as the login link."""
    auth = DashboardAuth(
        password=SecretStr(PASSWORD), token=SecretStr(TOKEN), login_token=LOGIN_TOKEN
    )
    app = create_dashboard_app(settings, pool=admin_pool, auth=auth)
    transport = httpx.ASGITransport(app=app, client=("10.0.0.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


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

    signed = await dashboard.post("/login", data={"token": LOGIN_TOKEN, "actor": "Ada L."})

    assert signed.status_code == 303 and signed.headers["location"] == "/"
    cookie = signed.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http on localhost; set behind https
    overview = await dashboard.get("/")
    assert overview.status_code == 200 and "Sign out" in overview.text and "Ada L." in overview.text

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
    assert (await guarded.get(f"/login?token={TOKEN}")).status_code == 200


async def test_too_many_failed_sign_ins_lock_everyone_out_for_a_while(
    guarded: httpx.AsyncClient,
) -> None:
    for _ in range(MAX_FAILURES):
        wrong = await guarded.post("/login", data={"password": "guess", "actor": "eve"})
        assert wrong.status_code == 401
    locked = await guarded.post("/login", data={"password": PASSWORD, "actor": "ada"})
    assert locked.status_code == 429


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
