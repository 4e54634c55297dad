"""The token never shows up in logs, reprs or errors, however a run fails."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
import respx

from smuves_sync.errors import HubSpotAuthError, HubSpotError
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import PORTAL, TOKEN, MakeClient, json_response
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"


def _capture_everything(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "smuves_sync"):
        caplog.set_level(logging.DEBUG, logger=name)


def _exception_texts(exc: BaseException) -> list[str]:
    texts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None:
        texts += [str(seen), repr(seen), repr(seen.args), repr(vars(seen))]
        seen = seen.__cause__ or seen.__context__
    return texts


def _log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    texts = [caplog.text]
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args), str(record.exc_text)]
    return texts


async def test_a_failing_run_never_reveals_the_token(
    router: respx.MockRouter, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    _capture_everything(caplog)
    leaky_401 = load("error_401")
    leaky_401["message"] = f"Token {TOKEN} is not valid"  # a body that echoes the credential
    router.get(PATH).mock(
        side_effect=[
            httpx.ConnectError("connection refused"),
            json_response(load("error_500"), 503),
            json_response(load("rate_limit_ten_secondly_rolling"), 429),
            json_response(leaky_401, 401),
        ]
    )
    router.get("/cms/v3/blogs/posts").mock(return_value=httpx.Response(200, text="<html>"))
    client = make_client()
    errors: list[BaseException] = []
    with pytest.raises(HubSpotAuthError) as caught:
        await client.count("site_page")
    errors.append(caught.value)
    with pytest.raises(HubSpotError) as caught_malformed:
        await client.count("blog_post")
    errors.append(caught_malformed.value)

    assert router.routes[0].calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert caplog.records, "the run logged nothing: the search below would prove nothing"
    texts = _log_texts(caplog)
    for exc in errors:
        texts += _exception_texts(exc)
    texts += [repr(client), repr(client._auth), repr(RateLimitRegistry().budget(PORTAL))]
    assert "***" in str(caught.value)  # the echoed token was masked, not dropped silently
    leaks = [text for text in texts if TOKEN in text]
    assert leaks == []


@pytest.fixture
async def leaky_server() -> AsyncIterator[str]:
    """A real HTTP server that answers 401 and echoes the Authorization header it received."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        auth = next(
            (
                line.split(":", 1)[1].strip()
                for line in head.split("\r\n")
                if line.lower().startswith("authorization:")
            ),
            "",
        )
        body = json.dumps({**load("error_401"), "message": f"bad credentials: {auth}"}).encode()
        writer.write(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_over_a_real_socket_httpx_and_httpcore_logs_stay_clean(
    leaky_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    _capture_everything(caplog)
    settings = Settings(hubspot_base_url=leaky_server, hubspot_max_retries=0)
    async with HubSpotClient(
        PORTAL, TOKEN, settings, RateLimitRegistry(), retry=RetryPolicy(max_attempts=1)
    ) as client:
        with pytest.raises(HubSpotAuthError) as caught:
            await client.count("site_page")
    assert "bad credentials: Bearer ***" in str(caught.value)
    assert any(r.name.startswith("httpcore") for r in caplog.records)
    assert any(r.name == "httpx" for r in caplog.records)
    texts = _log_texts(caplog) + _exception_texts(caught.value)
    assert [text for text in texts if TOKEN in text] == []
