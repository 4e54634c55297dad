"""Fixtures of the HTTP API tests: an app on this test's database, tokens, two users.

    async def test_x(client, alice, bob, factory): ...
        await client.get("/v1/portals", headers=alice.headers)

`client` talks to the app in-process (httpx ASGITransport); `app_server` serves the same app
under a real uvicorn on a local port; `smuves_serve` runs the command in a subprocess. Tokens
are signed with JWT_SECRET like Supabase's. HubSpot is a fake (`hubspot_accounts`) that knows
the portal of every token in HUBSPOT_TOKENS: the API asks it before connecting a portal.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from click.testing import CliRunner, Result
from fastapi import FastAPI
from pydantic import SecretStr

from smuves_sync.api import create_app
from smuves_sync.cli import cli
from smuves_sync.db import DbRole, Pool, pool_for
from smuves_sync.export_files import ExportFile, export_file_path
from smuves_sync.models import ContentType, ExportFormat, JobKind, JobStatus, RunStatus
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec, ServerConfig, serve_in_thread
from smuves_sync.token_crypto import new_secret_key
from tests.support import query, serve_app
from tests.support.factories import Factory
from tests.support.logins import runtime_env, runtime_url, runtime_urls

JWT_SECRET = "jwt-secret-for-tests-only-0123456789abcdef"
SECRET_KEY = new_secret_key()
# The `aud` of the tokens `make_token` signs, as Supabase's user tokens say.
AUDIENCE = "authenticated"
METRICS_TOKEN = "metrics-token-for-tests-only"
METRICS_HEADERS = {"Authorization": f"Bearer {METRICS_TOKEN}"}
# HubSpot private app tokens the API tests connect portals with, and the portal HubSpot says
# each belongs to (the fake answers /account-info/v3/details so).
HUBSPOT_TOKENS = {
    "pat-na1-11111111-2222-3333-4444-555555555555": 4242,
    "pat-new": 4242,
    "pat": 4244,
    "t": 91,
    "pat-na1-squatters-own-portal": 800,
    "pat-na1-acme-real-token": 700,
}
HUBSPOT_TIME_ZONES = {4242: "US/Eastern", 700: "Europe/Berlin"}


def make_token(
    sub: object,
    *,
    email: str | None = None,
    email_verified: object = None,
    expires_in: timedelta = timedelta(hours=1),
    secret: str = JWT_SECRET,
    algorithm: str = "HS256",
    **claims: Any,
) -> str:
    """A bearer token shaped like Supabase's (claims None are left out). An email is one the
    identity provider verified unless `email_verified` says otherwise ("omit": no claim)."""
    if email is not None and email_verified is None:
        email_verified = True
    elif email_verified == "omit":
        email_verified = None
    payload: dict[str, Any] = {
        "sub": str(sub),
        "email": email,
        "email_verified": email_verified,
        "exp": datetime.now(UTC) + expires_in,
        "aud": AUDIENCE,
        "role": "authenticated",
        **claims,
    }
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, secret, algorithm)


@dataclass(frozen=True)
class User:
    id: uuid.UUID
    email: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def plant_one_of_everything(
    factory: Factory,
    owner: User,
    portal_id: int,
    export_dir: Path,
    *,
    running: bool = False,
    name: str = "",
) -> dict[str, int | str]:
    """A portal of `owner` with one of everything an API path can name: a fetch run (with a
    job and a content item; both running, or else completed), a completed export written
    under `export_dir`, a notification. Returns their ids by path parameter name."""
    portal = await factory.portal(owner.id, portal_id=portal_id, name=name)
    run_status, job_status = (
        (RunStatus.RUNNING, JobStatus.RUNNING)
        if running
        else (RunStatus.COMPLETED, JobStatus.COMPLETED)
    )
    run = await factory.run(portal, owner=owner.id, status=run_status)
    await factory.job(run, status=job_status)
    hubspot_id = await factory.content_item(run)
    export_run = await factory.run(
        portal, owner=owner.id, kind=JobKind.EXPORT, status=RunStatus.COMPLETED
    )
    export_id = await factory.export(export_run, status=JobStatus.COMPLETED)
    named = ExportFile(portal, export_run.id, ContentType.SITE_PAGE, ExportFormat.CSV)
    export_file = export_file_path(export_dir, named)
    export_file.parent.mkdir(parents=True, exist_ok=True)
    export_file.write_text("hubspot_id\n1\n")
    await query(factory.pool, "plant_export_file", export_id=export_id, row_count=1, bytes=13)
    notification = await factory.notification(owner.id, run)
    changeset = await factory.changeset(portal, {"hubspot_id": hubspot_id})
    return {
        "changeset_id": changeset,
        "portal_id": portal,
        "run_id": run.id,
        "export_id": export_id,
        "notification_id": notification,
        # A content object's key: its type (a word, the same for every tenant) and id.
        "type": "site_page",
        "hubspot_id": hubspot_id,
        # its first version, recorded by the content_items trigger
        "version": 1,
    }


async def get_ok(client: httpx.AsyncClient, user: User, url: str) -> Any:
    """GET `url` as `user`: the body of its answer, which must be a 200."""
    response = await client.get(url, headers=user.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def new_user(factory: Factory, name: str) -> User:
    """A user already in app_users, with a valid token."""
    email = f"{name}-{uuid.uuid4().hex[:6]}@example.com"
    user_id = await factory.user(email)
    return User(user_id, email, make_token(user_id, email=email))


async def written_export(
    factory: Factory, admin_pool: Pool, owner: User, export_dir: Path, content: bytes
) -> tuple[int, Path]:
    """A completed CSV export of a portal of `owner`, its file written at its place; the
    export's id and that place."""
    portal = await factory.portal(owner.id)
    run = await factory.run(portal, owner=owner.id, kind=JobKind.EXPORT, status=RunStatus.COMPLETED)
    export_id = await factory.export(run, format=ExportFormat.CSV, status=JobStatus.COMPLETED)
    path = export_file_path(
        export_dir, ExportFile(portal, run.id, ContentType.SITE_PAGE, ExportFormat.CSV)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    await query(
        admin_pool, "plant_export_file", export_id=export_id, row_count=2, bytes=len(content)
    )
    return export_id, path


def hubspot_fake() -> FakeHubSpot:
    """A fake HubSpot that knows the portal (and time zone) of every token of HUBSPOT_TOKENS."""
    first: dict[int, str] = {}
    for token, portal_id in HUBSPOT_TOKENS.items():
        first.setdefault(portal_id, token)
    specs = [
        PortalSpec(portal_id, token, time_zone=HUBSPOT_TIME_ZONES.get(portal_id, "UTC"))
        for portal_id, token in first.items()
    ]
    fake = FakeHubSpot(specs, ServerConfig(ten_second_limit=None, daily_limit=None))
    for token, portal_id in HUBSPOT_TOKENS.items():
        fake.add_token(portal_id, token)
    return fake


@pytest.fixture(scope="session")
def hubspot_accounts() -> Iterator[str]:
    """Base URL of the API tests' fake HubSpot (one for the session: it keeps no state the
    tests depend on)."""
    with serve_in_thread(hubspot_fake()) as url:
        yield url


@pytest.fixture
def api_settings(db_url: str, tmp_path: Path, hubspot_accounts: str) -> Settings:
    return Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        hubspot_base_url=hubspot_accounts,
        jwt_secret=SecretStr(JWT_SECRET),
        jwt_audience=AUDIENCE,
        secret_key=SecretStr(SECRET_KEY),
        metrics_token=SecretStr(METRICS_TOKEN),
        export_dir=tmp_path / "exports",
    )


@pytest.fixture
async def api_pool(db_url: str) -> AsyncIterator[Pool]:
    """The API's own pool, logged in as smuves_api_login, as large as a served app's."""
    async with pool_for(runtime_url(db_url, DbRole.APP), max_size=10) as pool:
        yield pool


@pytest.fixture
def app(api_settings: Settings, api_pool: Pool) -> FastAPI:
    # Event streams look at their run every 10 ms: tests wait on events, not on time.
    return create_app(api_settings, pool=api_pool, events_interval=0.01)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


@pytest.fixture
async def alice(factory: Factory) -> User:
    return await new_user(factory, "alice")


@pytest.fixture
async def bob(factory: Factory) -> User:
    return await new_user(factory, "bob")


@pytest.fixture
async def app_server(app: FastAPI) -> AsyncIterator[str]:
    """Base URL of `app` served by uvicorn in this event loop."""
    async with serve_app(app) as base_url:
        yield base_url


def serve_refusal(env: dict[str, str | None]) -> Result:
    """`smuves serve --port 0` in this process with `env` (None unsets), on a database that is
    nowhere: what is checked first must refuse before any database is opened."""
    nowhere = "postgresql://nobody@127.0.0.1:1/none"
    return CliRunner().invoke(
        cli, ["serve", "--port", "0"], env={**env, "SMUVES_DATABASE_URL": nowhere}
    )


def serve_env(db_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `smuves serve` subprocess on this test's database (the API logs
    in as its own role)."""
    return {
        **os.environ,
        "SMUVES_DATABASE_URL": db_url,
        **runtime_env(db_url),
        "SMUVES_JWT_SECRET": JWT_SECRET,
        "SMUVES_JWT_AUDIENCE": AUDIENCE,
        "SMUVES_SECRET_KEY": SECRET_KEY,
        **extra,
    }


@asynccontextmanager
async def smuves_serve(
    env: dict[str, str], *args: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`smuves serve ARGS…` in a subprocess, its stderr piped; terminated at the end."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smuves_sync.cli",
        "serve",
        *args,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,  # the access log
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


async def stderr_until(
    process: asyncio.subprocess.Process, pattern: str | re.Pattern[str], timeout: float = 60
) -> tuple[re.Match[str], str]:
    """Read the process's stderr until a line matches `pattern`: the match and all read."""
    assert process.stderr is not None
    text = ""
    async with asyncio.timeout(timeout):
        while True:
            line = (await process.stderr.readline()).decode()
            assert line, f"the process exited: {text}"
            text += line
            if found := re.search(pattern, line):
                return found, text
