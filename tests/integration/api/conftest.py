"""Fixtures of the HTTP API tests: an app on this test's database, tokens, two users.

    async def test_x(client, alice, bob, factory): ...
        await client.get("/v1/portals", headers=alice.headers)

`client` talks to the app in-process (httpx ASGITransport); `app_server` serves the same app
under a real uvicorn on a local port. Tokens are signed with JWT_SECRET like Supabase's.
HubSpot is the fake (`hubspot`), which knows the portal of every token in HUBSPOT_TOKENS: the
API asks it before connecting a portal.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import uvicorn
from fastapi import FastAPI
from psycopg.rows import dict_row
from pydantic import SecretStr

from smuves_sync.api import create_app
from smuves_sync.db import DbRole, Pool, pool_for
from smuves_sync.db.queries import load_queries
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec, ServerConfig, serve_in_thread
from smuves_sync.token_crypto import new_secret_key
from tests.factories import Factory
from tests.logins import runtime_url, runtime_urls

JWT_SECRET = "jwt-secret-for-tests-only-0123456789abcdef"
SECRET_KEY = new_secret_key()
# The `aud` of the tokens `make_token` signs, as Supabase's user tokens say.
AUDIENCE = "authenticated"
METRICS_TOKEN = "metrics-token-for-tests-only"
METRICS_HEADERS = {"Authorization": f"Bearer {METRICS_TOKEN}"}
SQL = load_queries(Path(__file__).parent)
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


async def rows(pool: Pool, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run statement `name` of api_checks.sql as the pool's role; its rows."""
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(SQL[name], params)
        return await cur.fetchall() if cur.description else []


@dataclass(frozen=True)
class User:
    id: uuid.UUID
    email: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def new_user(factory: Factory, name: str) -> User:
    """A user already in app_users, with a valid token."""
    email = f"{name}-{uuid.uuid4().hex[:6]}@example.com"
    user_id = await factory.user(email)
    return User(user_id, email, make_token(user_id, email=email))


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
def hubspot() -> Iterator[str]:
    """Base URL of the API tests' fake HubSpot (one for the session: it keeps no state the
    tests depend on)."""
    with serve_in_thread(hubspot_fake()) as url:
        yield url


@pytest.fixture
def api_settings(db_url: str, tmp_path: Path, hubspot: str) -> Settings:
    return Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        hubspot_base_url=hubspot,
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
    """Base URL of `app` served by uvicorn in this event loop.

    The socket listens before uvicorn starts, so a client may connect at once: its
    connection waits in the backlog until the server accepts it; nobody polls for readiness.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    # Signals stay with pytest.
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()
