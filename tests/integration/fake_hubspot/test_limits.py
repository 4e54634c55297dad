"""HubSpot's limits with an injected clock: the rolling 10 s window, secondly, daily, headers."""

from __future__ import annotations

from smuves_sync.testing.fake_hubspot import FakeClock, FakeHubSpot, PortalSpec, ServerConfig
from smuves_sync.testing.fake_hubspot.limits import PortalLimiter
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client


def _policies(limiter: PortalLimiter, count: int) -> list[str | None]:
    return [limiter.admit().policy for _ in range(count)]


def test_the_ten_second_window_rolls() -> None:
    clock = FakeClock()
    limiter = PortalLimiter(ServerConfig(ten_second_limit=3, daily_limit=None), clock)
    assert _policies(limiter, 2) == [None, None]  # t = 0
    clock.advance(6)
    assert _policies(limiter, 2) == [None, "TEN_SECONDLY_ROLLING"]  # t = 6: full
    clock.advance(3.9)
    assert _policies(limiter, 1) == ["TEN_SECONDLY_ROLLING"]  # t = 9.9: still full
    clock.advance(0.1)
    assert _policies(limiter, 3) == [None, None, "TEN_SECONDLY_ROLLING"]  # t = 10: two left
    clock.advance(6)
    assert _policies(limiter, 2) == [None, "TEN_SECONDLY_ROLLING"]  # t = 16: t=6 one left


def test_refused_requests_are_not_counted_and_headers_tell_the_budget() -> None:
    clock = FakeClock()
    config = ServerConfig(ten_second_limit=2, daily_limit=5, send_retry_after=True)
    limiter = PortalLimiter(config, clock)
    first, second, refused = limiter.admit(), limiter.admit(), limiter.admit()
    assert first.headers == {
        "X-HubSpot-RateLimit-Daily": "5",
        "X-HubSpot-RateLimit-Daily-Remaining": "4",
        "X-HubSpot-RateLimit-Interval-Milliseconds": "10000",
        "X-HubSpot-RateLimit-Max": "2",
        "X-HubSpot-RateLimit-Remaining": "1",
    }
    assert second.headers["X-HubSpot-RateLimit-Remaining"] == "0"
    assert refused.policy == "TEN_SECONDLY_ROLLING" and refused.retry_after_s == 10
    assert refused.headers["X-HubSpot-RateLimit-Daily-Remaining"] == "3"
    clock.advance(10)
    assert limiter.admit().headers["X-HubSpot-RateLimit-Remaining"] == "1"


def test_the_daily_limit_resets_at_midnight_utc() -> None:
    clock = FakeClock(1_767_225_600.0 + 86_400 - 100)  # 23:58:20 UTC
    limiter = PortalLimiter(
        ServerConfig(ten_second_limit=None, daily_limit=2, send_retry_after=True), clock
    )
    assert _policies(limiter, 2) == [None, None]
    refused = limiter.admit()
    assert refused.policy == "DAILY" and refused.retry_after_s == 100
    clock.advance(100)
    assert limiter.admit().policy is None


def test_the_secondly_limit() -> None:
    clock = FakeClock()
    config = ServerConfig(ten_second_limit=None, secondly_limit=2, daily_limit=None)
    limiter = PortalLimiter(config, clock)
    assert _policies(limiter, 3) == [None, None, "SECONDLY"]
    assert limiter.admit().headers == {
        "X-HubSpot-RateLimit-Secondly": "2",
        "X-HubSpot-RateLimit-Secondly-Remaining": "0",
    }
    clock.advance(1)
    assert _policies(limiter, 1) == [None]


async def test_every_answer_carries_the_headers_and_limits_are_per_portal(serve: Serve) -> None:
    clock = FakeClock()
    other = PortalSpec(portal_id=5, token="other", site_pages=3)
    config = ServerConfig(ten_second_limit=2, daily_limit=100, send_retry_after=True)
    fake = FakeHubSpot([SMALL, other], config, clock=clock)
    base_url = serve(fake)
    async with client(base_url) as http, client(base_url, "other") as neighbour:
        answers = [
            await http.get("/cms/v3/pages/site-pages/1"),
            await http.get("/cms/v3/pages/site-pages", params={"limit": "x"}),
            await http.get("/cms/v3/pages/site-pages"),
        ]
        neighbour_answer = await neighbour.get("/cms/v3/pages/site-pages")
        clock.advance(10)
        after_window = await http.get("/cms/v3/pages/site-pages")
    assert [a.status_code for a in answers] == [404, 400, 429]
    for answer in answers:
        assert answer.headers["X-HubSpot-RateLimit-Max"] == "2"
        assert "X-HubSpot-RateLimit-Daily-Remaining" in answer.headers
    assert answers[2].headers["Retry-After"] == "10"
    assert answers[2].json()["policyName"] == "TEN_SECONDLY_ROLLING"
    assert neighbour_answer.status_code == 200
    assert after_window.status_code == 200
    assert after_window.headers["X-HubSpot-RateLimit-Remaining"] == "1"
    assert after_window.headers["X-HubSpot-RateLimit-Daily-Remaining"] == "97"
