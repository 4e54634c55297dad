"""Shared pieces of the HubSpot client tests: a fake clock, settings, a client factory, respx."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.settings import Settings
from tests.unit.hubspot.virtual_time import VirtualTimeLoop

BASE_URL = "https://api.hubapi.test"
TOKEN = "pat-na1-5d0c2a7e-91b3-4c1f-8e6a-0f3b2d9c7a41"
PORTAL = 4242


class FakeClock:
    """Time that moves only when someone sleeps; `sleeps` records every wait asked for."""

    def __init__(self, start: datetime = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)) -> None:
        self.start = start
        self.elapsed = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return 1000.0 + self.elapsed

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.elapsed += max(0.0, seconds)
        await asyncio.sleep(0)  # let other tasks run, as a real sleep would


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def virtual_loop() -> Iterator[VirtualTimeLoop]:
    """An event loop on virtual time, for plain (not async) tests to run coroutines on."""
    loop = VirtualTimeLoop()
    yield loop
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


@pytest.fixture
def limits(clock: FakeClock) -> RateLimitRegistry:
    return RateLimitRegistry(clock)


@pytest.fixture
def hubspot_settings() -> Settings:
    return Settings(hubspot_base_url=BASE_URL, hubspot_max_retries=3)


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as mocked:
        yield mocked


MakeClient = Callable[..., HubSpotClient]


@pytest.fixture
async def make_client(
    hubspot_settings: Settings, limits: RateLimitRegistry
) -> AsyncIterator[MakeClient]:
    made: list[HubSpotClient] = []

    def make(
        *,
        portal_id: int = PORTAL,
        settings: Settings | None = None,
        registry: RateLimitRegistry | None = None,
        **kwargs: Any,
    ) -> HubSpotClient:
        kwargs.setdefault(
            "retry", RetryPolicy(max_attempts=4, initial_backoff_seconds=0.5, max_backoff_seconds=4)
        )
        client = HubSpotClient(
            portal_id, TOKEN, settings or hubspot_settings, registry or limits, **kwargs
        )
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    """A response with a JSON body, as HubSpot sends it."""
    return httpx.Response(status, json=body, headers=headers)


def rate_headers(limit: int, remaining: int, interval_ms: int = 10_000) -> dict[str, str]:
    """HubSpot's rolling-window rate-limit headers."""
    return {
        "X-HubSpot-RateLimit-Max": str(limit),
        "X-HubSpot-RateLimit-Remaining": str(remaining),
        "X-HubSpot-RateLimit-Interval-Milliseconds": str(interval_ms),
    }
