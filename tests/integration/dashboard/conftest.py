"""Fixtures of the dashboard tests: the app on this test's database, signed in or not.

    async def test_x(dashboard, signed_in, factory): ...
        page = await dashboard.get("/runs")                  # as a signed-in operator
        await post_form(dashboard, "/dead-letter/retry", signed_in, only=job.id)
        await confirm(dashboard, "/dead-letter/retry", signed_in, only=job.id)   # and Confirm

`dashboard` talks to the app in-process (httpx ASGITransport) as the login role, like
`smuves dashboard` does; `signed_in` signs it in with the login link's token and returns the
session's CSRF token.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from starlette.applications import Starlette

from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.db import Pool
from smuves_sync.settings import Settings

LOGIN_TOKEN = "login-link-token-for-tests"
BASE_URL = "http://dashboard.test"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


class Clock:
    """The sign-in state's clock (seconds), moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """The clock of `auth`."""
    return Clock()


@pytest.fixture
def auth(clock: Clock) -> DashboardAuth:
    """The dashboard's sign-in state, with a known login-link token and `clock`."""
    return DashboardAuth(login_token=LOGIN_TOKEN, clock=clock)


@pytest.fixture
def dashboard_app(settings: Settings, admin_pool: Pool, auth: DashboardAuth) -> Starlette:
    """The dashboard app on this test's database."""
    return create_dashboard_app(settings, pool=admin_pool, auth=auth)


@asynccontextmanager
async def browser_at(app: Starlette, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client of `app` whose requests come from `address`."""
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
        yield client


@pytest.fixture
async def dashboard(dashboard_app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the dashboard app on this test's database (not signed in), at 127.0.0.1."""
    async with browser_at(dashboard_app, "127.0.0.1") as client:
        yield client


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry."""
    found = _CSRF.search(html)
    assert found, "no form with a CSRF token on the page"
    return found.group(1)


async def sign_in(
    client: httpx.AsyncClient, *, actor: str = "ada", token: str = LOGIN_TOKEN
) -> str:
    """Sign `client` in with `token`; the session's CSRF token."""
    response = await client.post("/login", data={"token": token, "actor": actor})
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/"
    return csrf_of((await client.get("/portals")).text)


@pytest.fixture
async def signed_in(dashboard: httpx.AsyncClient) -> str:
    """Sign the `dashboard` client in as "ada"; the session's CSRF token."""
    return await sign_in(dashboard)


async def post_form(
    client: httpx.AsyncClient, path: str, csrf: str | None, **fields: Any
) -> httpx.Response:
    """POST a form as a browser of this origin would (list values repeat the field)."""
    data: list[tuple[str, str]] = [] if csrf is None else [("csrf", csrf)]
    for name, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            data.append((name, str(item)))
    return await client.post(
        path,
        content=urlencode(data),
        headers={"Origin": BASE_URL, "Content-Type": "application/x-www-form-urlencoded"},
    )


def confirmation_form(page: str, path: str) -> list[tuple[str, str]]:
    """The fields the Confirm button of a confirmation page for `path` posts."""
    found = re.search(rf'<form method="post" action="{re.escape(path)}">(.*?)</form>', page, re.S)
    assert found, f"no confirmation form for {path} on the page"
    return [(name, html.unescape(value)) for name, value in _HIDDEN.findall(found.group(1))]


async def press_confirm(client: httpx.AsyncClient, page: str, path: str) -> httpx.Response:
    """Press Confirm on the confirmation page `page` (its own fields, nonce and all)."""
    return await client.post(
        path,
        content=urlencode(confirmation_form(page, path)),
        headers={"Origin": BASE_URL, "Content-Type": "application/x-www-form-urlencoded"},
    )


async def confirm(client: httpx.AsyncClient, path: str, csrf: str, **fields: Any) -> httpx.Response:
    """Press a button (POST `fields`), then Confirm on the page it answers with."""
    asked = await post_form(client, path, csrf, **fields)
    assert asked.status_code == 200 and "Confirm:" in asked.text, asked.text
    return await press_confirm(client, asked.text, path)
