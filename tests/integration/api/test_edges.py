"""The API's edges: who is asked first (401 before any body is read), how large a body may be
(413, declared or chunked), how long an event stream lives (its token's), which audience a
token must be for, and who may read /metrics (never a tenant)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from smuves_sync.api import create_app
from smuves_sync.db import Pool
from smuves_sync.errors import ConfigurationError
from smuves_sync.models import JobStatus, RunStatus
from smuves_sync.settings import Settings
from tests.integration.api.conftest import (
    JWT_SECRET,
    METRICS_HEADERS,
    SECRET_KEY,
    User,
    make_token,
    serve_env,
    serve_refusal,
    smuves_serve,
    stderr_until,
)
from tests.support import query
from tests.support.factories import Factory

_USER = uuid.UUID("00000000-0000-4000-8000-0000000000e1")
MiB = 1024 * 1024


def _client(app: FastAPI, base_url: str = "http://api") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url)


# -- authentication comes before the body --------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "headers"),
    [
        (b"{not json", {}),
        (b'{"id": "not a number"}', {}),
        (b"{not json", {"Authorization": "Bearer not-a-jwt"}),
        (b"{not json", {"Authorization": f"Bearer {make_token(_USER, secret='x' * 40)}"}),
    ],
    ids=["malformed-no-token", "invalid-no-token", "malformed-bad-token", "malformed-wrong-key"],
)
async def test_a_body_from_nobody_known_is_never_parsed(
    client: httpx.AsyncClient, content: bytes, headers: dict[str, str]
) -> None:
    response = await client.post(
        "/v1/portals", content=content, headers={**headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 401, response.text
    assert response.json()["code"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"] == "Bearer"


async def test_an_unauthenticated_body_is_not_read(app: FastAPI) -> None:
    reads = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal reads
        for _ in range(4):
            reads += 1
            yield b"x" * 1024

    async with _client(app) as client:
        response = await client.post("/v1/portals/1/fetches", content=body())
    assert response.status_code == 401
    assert reads <= 1  # at most what the transport pulls before the app is called


async def test_a_signed_in_callers_bad_body_is_still_422(
    client: httpx.AsyncClient, alice: User
) -> None:
    response = await client.post(
        "/v1/portals",
        content=b"{not json",
        headers={**alice.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 422 and response.json()["code"] == "INVALID_INPUT"


# -- body size -------------------------------------------------------------------------------------


def _too_large(response: httpx.Response, limit: int) -> None:
    assert response.status_code == 413, response.text
    assert response.json() == {
        "code": "PAYLOAD_TOO_LARGE",
        "message": f"the request body is larger than {limit} bytes",
    }


async def test_a_declared_body_over_one_mib_is_413_and_changes_nothing(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    # Valid JSON the route would accept, but padded past the limit.
    body = b'{"id": 4242, "name": "' + b"n" * MiB + b'", "token": "pat"}'
    response = await client.post(
        "/v1/portals",
        content=body,
        headers={**alice.headers, "Content-Type": "application/json"},
    )
    _too_large(response, MiB)
    assert await query(admin_pool, "check_portal_token", portal_id=4242) == []


async def test_a_chunked_body_over_the_limit_is_413(
    api_settings: Settings, api_pool: Pool, admin_pool: Pool, alice: User
) -> None:
    app = create_app(api_settings.model_copy(update={"max_request_bytes": 1000}), pool=api_pool)

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: sent chunked
        yield b'{"id": 4243, "name": "'
        for _ in range(10):
            yield b"n" * 200
        yield b'", "token": "pat"}'

    async with _client(app) as client:
        response = await client.post(
            "/v1/portals",
            content=chunks(),
            headers={**alice.headers, "Content-Type": "application/json"},
        )
        small = await client.post(
            "/v1/portals",
            json={"id": 4244, "name": "small", "token": "pat"},
            headers=alice.headers,
        )
    _too_large(response, 1000)
    assert await query(admin_pool, "check_portal_token", portal_id=4243) == []
    assert small.status_code == 201


async def test_a_chunked_body_over_the_limit_is_413_over_the_wire(
    app_server: str, admin_pool: Pool, alice: User
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"id": 4245, "name": "'
        for _ in range(40):
            yield b"n" * 64 * 1024
        yield b'", "token": "pat"}'

    async with httpx.AsyncClient(base_url=app_server, timeout=30) as client:
        try:
            response = await client.post(
                "/v1/portals",
                content=chunks(),
                headers={**alice.headers, "Content-Type": "application/json"},
            )
        except httpx.WriteError:  # the server may close before the client has sent it all
            response = None
    if response is not None:
        _too_large(response, MiB)
    assert await query(admin_pool, "check_portal_token", portal_id=4245) == []


# -- event streams end with their token ------------------------------------------------------------


async def test_the_event_stream_ends_when_its_token_expires(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING, processed=1, total=10)
    short = make_token(alice.id, email=alice.email, expires_in=timedelta(seconds=2))
    async with asyncio.timeout(20):  # without the expiry the stream would follow the run forever
        response = await client.get(
            f"/v1/runs/{run.id}/events", headers={"Authorization": f"Bearer {short}"}
        )
    assert response.status_code == 200
    names = re.findall(r"^event: (\w+)$", response.text, re.MULTILINE)
    assert names[0] == "progress" and names[-1] == "expired"
    assert "end" not in names
    assert f'data: {{"id": {run.id}}}' in response.text.rsplit("event: expired", 1)[1]


# -- audience ------------------------------------------------------------------------------------


def test_the_app_refuses_to_start_without_an_audience(
    api_settings: Settings, api_pool: Pool
) -> None:
    with pytest.raises(ConfigurationError, match="SMUVES_JWT_AUDIENCE is not set") as info:
        create_app(api_settings.model_copy(update={"jwt_audience": None}), pool=api_pool)
    assert "SMUVES_JWT_ALLOW_ANY_AUDIENCE=1" in str(info.value)


async def test_any_audience_only_when_allowed_on_purpose(
    api_settings: Settings, api_pool: Pool
) -> None:
    anyone = api_settings.model_copy(update={"jwt_audience": None, "jwt_allow_any_audience": True})
    async with _client(create_app(anyone, pool=api_pool)) as client:
        response = await client.get(
            "/v1/portals", headers={"Authorization": f"Bearer {make_token(_USER, aud='other')}"}
        )
    assert response.status_code == 200


def test_serve_without_an_audience_exits_2_in_one_line() -> None:
    result = serve_refusal(
        {
            "SMUVES_JWT_SECRET": JWT_SECRET,
            "SMUVES_JWT_AUDIENCE": None,
            "SMUVES_JWT_ALLOW_ANY_AUDIENCE": None,
            "SMUVES_SECRET_KEY": SECRET_KEY,
        }
    )
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "SMUVES_JWT_AUDIENCE is not set" in result.output


# -- /metrics ------------------------------------------------------------------------------------


async def test_metrics_need_their_own_token_never_a_tenants(
    client: httpx.AsyncClient, alice: User
) -> None:
    assert (await client.get("/metrics", headers=METRICS_HEADERS)).status_code == 200
    for headers in ({}, alice.headers, {"Authorization": "Bearer wrong-token"}):
        response = await client.get("/metrics", headers=headers)
        assert response.status_code == 401, headers
        assert response.json()["code"] == "UNAUTHENTICATED"


async def test_without_a_token_metrics_are_not_served_to_tenants(
    api_settings: Settings, api_pool: Pool, alice: User
) -> None:
    app = create_app(api_settings.model_copy(update={"metrics_token": None}), pool=api_pool)
    async with _client(app) as client:
        for headers in ({}, alice.headers):
            response = await client.get("/metrics", headers=headers)
            assert response.status_code == 404
            assert response.json() == {"code": "NOT_FOUND", "message": "Not Found"}


async def test_the_metrics_port_serves_metrics_and_nothing_else(
    api_settings: Settings, api_pool: Pool, alice: User
) -> None:
    settings = api_settings.model_copy(update={"metrics_token": None})
    app = create_app(settings, pool=api_pool, metrics_port=9100)
    async with _client(app, "http://api:9100") as metrics, _client(app, "http://api") as tenants:
        assert (await metrics.get("/metrics")).status_code == 200
        assert (await metrics.get("/v1/portals", headers=alice.headers)).status_code == 404
        assert (await metrics.get("/healthz")).status_code == 404
        assert (await tenants.get("/metrics", headers=alice.headers)).status_code == 404
        assert (await tenants.get("/v1/portals", headers=alice.headers)).status_code == 200


async def test_the_metrics_port_asks_for_the_token_when_one_is_set(
    app: FastAPI, api_settings: Settings, api_pool: Pool
) -> None:
    app = create_app(api_settings, pool=api_pool, metrics_port=9100)
    async with _client(app, "http://api:9100") as metrics:
        assert (await metrics.get("/metrics")).status_code == 401
        assert (await metrics.get("/metrics", headers=METRICS_HEADERS)).status_code == 200


async def test_smuves_serve_with_a_metrics_port(db_url: str, alice: User) -> None:
    env = serve_env(db_url)
    env.pop("SMUVES_METRICS_TOKEN", None)
    async with smuves_serve(env, "--port", "0", "--metrics-port", "0") as process:
        found, text = await stderr_until(process, r"/metrics on (http://\S+)/metrics")
        api_url = re.search(r"Uvicorn running on (http://\S+)", text)
        assert api_url is not None, text
        async with httpx.AsyncClient(timeout=10) as http:
            scraped = await http.get(f"{found.group(1)}/metrics")
            assert scraped.status_code == 200 and "smuves_jobs" in scraped.text
            tenant = await http.get(f"{api_url.group(1)}/metrics", headers=alice.headers)
            assert tenant.status_code == 404
            listed = await http.get(f"{found.group(1)}/v1/portals", headers=alice.headers)
            assert listed.status_code == 404
            mine = await http.get(f"{api_url.group(1)}/v1/portals", headers=alice.headers)
            assert mine.status_code == 200
