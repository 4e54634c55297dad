"""Pacing from HubSpot's rate-limit headers, shared per portal, and every kind of 429."""

from __future__ import annotations

import asyncio
from collections import deque
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.errors import HubSpotDailyLimitReached, HubSpotRateLimited
from smuves_sync.hubspot.limit_headers import next_midnight, parse_retry_after
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.retry import RetryPolicy
from tests.unit.hubspot.conftest import (
    PORTAL,
    FakeClock,
    MakeClient,
    json_response,
    rate_headers,
)
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"


class RollingLimitServer:
    """A list endpoint that enforces `limit` requests per rolling `window` of fake time."""

    def __init__(self, clock: FakeClock, limit: int, window: float = 10.0) -> None:
        self.clock, self.limit, self.window = clock, limit, window
        self.times: list[float] = []
        self.rejected = 0
        self._recent: deque[float] = deque()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        now = self.clock.elapsed
        while self._recent and self._recent[0] <= now - self.window:
            self._recent.popleft()
        if len(self._recent) >= self.limit:
            self.rejected += 1
            return json_response(load("rate_limit_ten_secondly_rolling"), 429)
        self._recent.append(now)
        self.times.append(now)
        remaining = self.limit - len(self._recent)
        headers = rate_headers(self.limit, remaining, int(self.window * 1000))
        return json_response(load("site_pages_2"), headers=headers)

    def most_in_any_window(self) -> int:
        return max(sum(1 for u in self.times if t <= u < t + self.window) for t in self.times)


# -- pacing -----------------------------------------------------------------------------------


async def test_requests_are_paced_from_the_headers_so_no_429_happens(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    server = RollingLimitServer(clock, limit=10)
    router.get(PATH).mock(side_effect=server)
    client = make_client()
    for _ in range(35):
        await client.count("site_page")
    assert server.rejected == 0
    assert len(server.times) == 35
    assert server.most_in_any_window() <= 10
    assert clock.elapsed >= 30  # 35 requests at 10 per 10 s need three full windows


async def test_concurrent_fetches_of_one_portal_share_its_budget(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    server = RollingLimitServer(clock, limit=10)
    router.get(PATH).mock(side_effect=server)
    clients = [make_client(), make_client(), make_client()]

    async def fetch(client: Any) -> None:
        for _ in range(10):
            await client.count("site_page")

    await asyncio.gather(*(fetch(c) for c in clients))
    assert server.rejected == 0
    assert len(server.times) == 30
    assert server.most_in_any_window() <= 10


def test_each_portal_has_its_own_budget(limits: RateLimitRegistry) -> None:
    assert limits.budget(1) is limits.budget(1)
    assert limits.budget(1) is not limits.budget(2)


async def test_one_portal_spending_its_budget_does_not_slow_another(
    limits: RateLimitRegistry, clock: FakeClock
) -> None:
    busy, idle = limits.budget(1), limits.budget(2)
    for _ in range(100):  # the assumed default: 100 per 10 s
        await busy.acquire()
    assert clock.sleeps == []
    await idle.acquire()
    assert clock.sleeps == []
    await busy.acquire()
    assert clock.sleeps == [pytest.approx(10.3)]  # window plus its safety margin


async def test_a_learned_higher_limit_is_used(limits: RateLimitRegistry, clock: FakeClock) -> None:
    budget = limits.budget(PORTAL)
    await budget.acquire()
    budget.observe(httpx.Headers(rate_headers(190, 189)))
    for _ in range(189):
        await budget.acquire()
    assert clock.sleeps == []
    await budget.acquire()
    assert len(clock.sleeps) == 1


async def test_a_different_window_replaces_the_assumed_one(
    limits: RateLimitRegistry, clock: FakeClock
) -> None:
    budget = limits.budget(PORTAL)
    budget.observe(httpx.Headers(rate_headers(150, 150, interval_ms=60_000)))
    for _ in range(150):
        await budget.acquire()
    assert clock.sleeps == []
    await budget.acquire()
    assert clock.sleeps == [pytest.approx(61.8)]  # 60 s plus 3 %


async def test_usage_by_others_seen_in_remaining_slows_us_down(
    limits: RateLimitRegistry, clock: FakeClock
) -> None:
    budget = limits.budget(PORTAL)
    await budget.acquire()
    # HubSpot counts 10 of 10 used, we sent one: nine came from elsewhere.
    budget.observe(httpx.Headers(rate_headers(10, 0)))
    await budget.acquire()
    assert clock.sleeps == [pytest.approx(10.0)]


@pytest.mark.parametrize(
    ("observed", "requests", "sleeps"),
    [
        (
            [{"X-HubSpot-RateLimit-Secondly": "2", "X-HubSpot-RateLimit-Secondly-Remaining": "2"}],
            3,
            [pytest.approx(1.1)],
        ),
        ([{"X-HubSpot-RateLimit-Max": "lots"}, {"X-HubSpot-RateLimit-Max": "0"}], 100, []),
    ],
    ids=["the-secondly-limit-is-respected", "unreadable-headers-are-ignored"],
)
async def test_the_headers_pace_the_budget(
    limits: RateLimitRegistry,
    clock: FakeClock,
    observed: list[dict[str, str]],
    requests: int,
    sleeps: list[object],
) -> None:
    budget = limits.budget(PORTAL)
    for headers in observed:
        budget.observe(httpx.Headers(headers))
    for _ in range(requests):
        await budget.acquire()
    assert clock.sleeps == sleeps


# -- 429s -------------------------------------------------------------------------------------


def _429(policy: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return json_response(load(f"rate_limit_{policy.lower()}"), 429, headers)


@pytest.mark.parametrize("policy", ["TEN_SECONDLY_ROLLING", "SECONDLY"])
async def test_short_window_429s_wait_and_spend_no_attempt(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock, policy: str
) -> None:
    route = router.get(PATH).mock(
        side_effect=[_429(policy), _429(policy), json_response(load("site_pages_1"))]
    )
    client = make_client(retry=RetryPolicy(max_attempts=1))
    assert await client.count("site_page") == 3
    assert route.call_count == 3
    assert len(clock.sleeps) == 2
    window = 1.0 if policy == "SECONDLY" else 10.0
    assert all(0 < s <= window for s in clock.sleeps)


async def test_retry_after_is_honoured(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    seen: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(clock.elapsed)
        if len(seen) == 1:
            return _429("TEN_SECONDLY_ROLLING", {"Retry-After": "7"})
        return json_response(load("site_pages_1"))

    router.get(PATH).mock(side_effect=handler)
    assert await make_client().count("site_page") == 3
    assert seen[1] - seen[0] == pytest.approx(7.0)


async def test_a_429_pauses_every_fetch_of_the_portal(
    limits: RateLimitRegistry, clock: FakeClock
) -> None:
    budget = limits.budget(PORTAL)
    assert budget.rate_limited("TEN_SECONDLY_ROLLING", 4.0) == 0.0
    await budget.acquire()
    assert clock.sleeps == [pytest.approx(4.0)]
    await limits.budget(PORTAL + 1).acquire()
    assert clock.sleeps == [pytest.approx(4.0)]


async def test_without_pacing_only_the_caller_waits(clock: FakeClock) -> None:
    naive = RateLimitRegistry(clock, pacing=False).budget(PORTAL)
    for _ in range(150):
        await naive.acquire()
    assert naive.rate_limited("TEN_SECONDLY_ROLLING", None) == 1.0
    assert naive.rate_limited("TEN_SECONDLY_ROLLING", 3.0) == 3.0
    await naive.acquire()
    assert clock.sleeps == []


async def test_endless_429s_give_up_as_rate_limited(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get(PATH).mock(return_value=_429("TEN_SECONDLY_ROLLING"))
    client = make_client(retry=RetryPolicy(max_attempts=3, max_rate_limit_waits=5))
    with pytest.raises(HubSpotRateLimited) as caught:
        await client.count("site_page")
    assert route.call_count == 6
    assert caught.value.policy == "TEN_SECONDLY_ROLLING"
    assert caught.value.retryable is True
    assert caught.value.correlation_id == "c033cdaa-2c40-4a64-ae48-b4cec88dad24"


async def test_the_daily_limit_raises_with_the_next_midnight_and_parks_the_portal(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    route = router.get(PATH).mock(side_effect=[_429("DAILY"), json_response(load("site_pages_1"))])
    client = make_client()
    with pytest.raises(HubSpotDailyLimitReached) as caught:
        await client.count("site_page")
    assert caught.value.resets_at == datetime(2026, 3, 11, tzinfo=UTC)
    assert (caught.value.portal_id, caught.value.content_type) == (PORTAL, "site_page")
    assert caught.value.policy == "DAILY"
    assert route.call_count == 1
    # Until the reset, the portal makes no further requests.
    with pytest.raises(HubSpotDailyLimitReached):
        await client.count("site_page")
    assert route.call_count == 1
    clock.elapsed += 8.5 * 3600
    assert await client.count("site_page") == 3


async def test_the_daily_reset_follows_the_portals_time_zone(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get(PATH).mock(return_value=_429("DAILY"))
    client = make_client(portal_timezone=timezone(timedelta(hours=-5)))
    with pytest.raises(HubSpotDailyLimitReached) as caught:
        await client.count("site_page")
    # 15:30 UTC is 10:30 at UTC-5; midnight there is 05:00 UTC the next day.
    assert caught.value.resets_at == datetime(2026, 3, 11, 5, tzinfo=UTC)


async def test_the_daily_reset_uses_retry_after_when_given(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    router.get(PATH).mock(return_value=_429("DAILY", {"Retry-After": "3600"}))
    with pytest.raises(HubSpotDailyLimitReached) as caught:
        await make_client().count("site_page")
    assert caught.value.resets_at == clock.now() + timedelta(hours=1)


async def test_a_spent_daily_budget_in_the_headers_stops_further_requests(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    headers = {"X-HubSpot-RateLimit-Daily": "250000", "X-HubSpot-RateLimit-Daily-Remaining": "0"}
    route = router.get(PATH).mock(return_value=json_response(load("site_pages_1"), headers=headers))
    client = make_client()
    assert await client.count("site_page") == 3
    with pytest.raises(HubSpotDailyLimitReached):
        await client.count("site_page")
    assert route.call_count == 1


# -- parsing and dates -----------------------------------------------------------------------


def test_retry_after_parsing() -> None:
    now = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)
    assert parse_retry_after("12", now) == 12.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("-3", now) == 0.0
    assert parse_retry_after("Tue, 10 Mar 2026 15:31:00 GMT", now) == 60.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after("nan", now) is None
    assert parse_retry_after(None, now) is None


def test_next_midnight() -> None:
    zone = timezone(timedelta(hours=9))
    assert next_midnight(datetime(2026, 3, 10, 15, 30, tzinfo=UTC), zone) == datetime(
        2026, 3, 11, 15, tzinfo=UTC
    )
    assert next_midnight(datetime(2026, 3, 10, 0, 0, tzinfo=UTC), UTC) == datetime(
        2026, 3, 11, tzinfo=UTC
    )
