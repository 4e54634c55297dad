"""HubSpot unreachable: requests wait on the process's one outage, one probe at a time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import httpx
import pytest

from smuves_sync.errors import HubSpotRateLimited, HubSpotUnavailable, HubSpotUnreachable
from smuves_sync.hubspot.outage import (
    HubSpotOutage,
    OutageStatus,
    duration_words,
    transport_cause,
)
from smuves_sync.hubspot.retry import RetryPolicy
from tests.unit.hubspot.virtual_time import LoopClock, VirtualTimeLoop, run

# Two tries of a request's own: an outage that outlasts them spends none of them.
POLICY = RetryPolicy(max_attempts=2, initial_backoff_seconds=0.5, max_backoff_seconds=30)


def _no_pause(_: HubSpotRateLimited) -> float:
    return 0.0


class Host:
    """HubSpot's host as the requests of one process find it: down until `up_at`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, up_at: float) -> None:
        self.loop = loop
        self.up_at = up_at
        self.sent: list[tuple[float, str]] = []

    def sender(self, name: str) -> Callable[[], Awaitable[str]]:
        async def send() -> str:
            now = self.loop.time()
            self.sent.append((now, name))
            await asyncio.sleep(0)
            if now < self.up_at:
                raise HubSpotUnavailable("could not connect", cause="connection refused")
            return name

        return send


async def _ask(
    policy: RetryPolicy, outage: HubSpotOutage, clock: LoopClock, send: Callable[[], Awaitable[str]]
) -> str:
    return await policy.run(
        send,
        clock=clock,
        on_rate_limited=_no_pause,
        outage=outage,
        context={"portal_id": 7, "content_type": "site_page"},
    )


def test_requests_wait_on_one_outage_with_growing_backoff_and_spend_no_attempt(
    virtual_loop: VirtualTimeLoop,
) -> None:
    clock = LoopClock(virtual_loop)
    outage = HubSpotOutage(clock)
    host = Host(virtual_loop, up_at=20.0)
    names = [f"r{i}" for i in range(5)]

    async def main() -> list[object]:
        return await asyncio.gather(
            *(_ask(POLICY, outage, clock, host.sender(name)) for name in names)
        )

    assert run(virtual_loop, main()) == names
    times = [t for t, _ in host.sent]
    # The five went before anyone knew; then one probe at a time, each further out
    # (0.5 s, 1 s, 2 s, 4 s, 8 s, 16 s after the last), and everyone once one got through.
    assert times[:5] == [0.0] * 5
    assert times[5:10] == [0.5, 1.5, 3.5, 7.5, 15.5]
    assert times[10:] == [31.5] * 5
    assert outage.status() is None


def test_past_the_bound_every_waiting_request_fails_in_plain_words(
    virtual_loop: VirtualTimeLoop,
) -> None:
    clock = LoopClock(virtual_loop)
    outage = HubSpotOutage(clock)
    host = Host(virtual_loop, up_at=float("inf"))
    bounded = RetryPolicy(max_attempts=2, initial_backoff_seconds=0.5, outage_max_seconds=10)

    async def main() -> list[object]:
        asks = (_ask(bounded, outage, clock, host.sender(f"r{i}")) for i in range(3))
        return await asyncio.gather(*asks, return_exceptions=True)

    failed = run(virtual_loop, main())
    assert all(isinstance(error, HubSpotUnreachable) for error in failed)
    first = failed[0]
    assert isinstance(first, HubSpotUnreachable) and not first.retryable
    assert (first.portal_id, first.content_type, first.cause) == (
        7,
        "site_page",
        "connection refused",
    )
    assert first.lasted == 10.0
    assert str(first).startswith("HubSpot was unreachable for 10 s (connection refused)")
    # Three before the outage was known, then the probes until the bound: no more.
    assert [t for t, _ in host.sent] == [0.0, 0.0, 0.0, 0.5, 1.5, 3.5, 7.5]
    # A request that comes later goes as a probe when one is due, so a process notices
    # HubSpot is back; until then it fails at once.
    host.up_at = 0.0

    async def later() -> object:
        await asyncio.sleep(10)
        return await _ask(bounded, outage, clock, host.sender("later"))

    assert run(virtual_loop, later()) == "later"
    assert outage.status() is None


def test_a_request_failing_while_hubspot_answers_others_spends_its_own_tries(
    virtual_loop: VirtualTimeLoop,
) -> None:
    clock = LoopClock(virtual_loop)
    outage = HubSpotOutage(clock)
    bad_sends: list[float] = []

    async def bad() -> str:
        bad_sends.append(virtual_loop.time())
        await asyncio.sleep(0)
        raise HubSpotUnavailable("HTTP 503", cause="HTTP 503")

    async def good() -> str:
        await asyncio.sleep(0)
        return "ok"

    async def main() -> BaseException | None:
        asking = asyncio.ensure_future(_ask(POLICY, outage, clock, bad))
        while not asking.done():
            await _ask(POLICY, outage, clock, good)
            await asyncio.sleep(0.1)
        return asking.exception()

    error = run(virtual_loop, main())
    # Not an outage: it fails as a transient failure of its own (a job attempt), long before
    # any outage bound.
    assert type(error) is HubSpotUnavailable
    assert virtual_loop.time() < 10


def test_the_outage_tells_the_log_once_and_then_at_most_once_a_minute(
    virtual_loop: VirtualTimeLoop, caplog: pytest.LogCaptureFixture
) -> None:
    clock = LoopClock(virtual_loop)
    outage = HubSpotOutage(clock)
    host = Host(virtual_loop, up_at=300.0)
    caplog.set_level(logging.DEBUG, logger="smuves_sync.hubspot.outage")

    async def main() -> object:
        return await _ask(POLICY, outage, clock, host.sender("r"))

    run(virtual_loop, main())
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(host.sent) > 10
    assert warned[0].startswith("HubSpot unreachable (connection refused)")
    assert warned[-1] == "HubSpot reachable again after 5 min"
    # 5 minutes: the start, a reminder a minute at most, the end.
    assert len(warned) <= 1 + 5 + 1


def test_the_status_line_says_since_when_and_the_next_try() -> None:
    since = datetime(2026, 3, 10, 18, 31, 5, tzinfo=UTC)
    status = OutageStatus(since, "connection refused", lasted=40.0, next_try_in=19.2)
    local = since.astimezone().strftime("%H:%M:%S")
    assert status.line() == (
        f"HubSpot unreachable since {local} (connection refused), next try in 20 s"
    )


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (4, "4 s"),
        (59.4, "59 s"),
        (60, "1 min"),
        (754, "13 min"),
        (3600, "1 h"),
        (3900, "1 h 5 min"),
    ],
)
def test_durations_read_as_a_person_says_them(seconds: float, words: str) -> None:
    assert duration_words(seconds) == words


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "connection refused"),
        (httpx.ConnectError("[Errno -2] Name or service not known"), "host name not found"),
        (httpx.ConnectTimeout("timed out"), "connecting timed out"),
        (httpx.ReadTimeout("timed out"), "no answer in time"),
        (httpx.RemoteProtocolError("Server disconnected"), "connection dropped"),
    ],
)
def test_transport_errors_are_told_in_words(error: httpx.TransportError, cause: str) -> None:
    assert transport_cause(error) == cause


async def test_a_refused_connection_is_told_as_such_from_the_cause_httpx_hides() -> None:
    # httpx says "All connection attempts failed"; the OS's refusal is among its causes.
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError) as caught:
            await client.get("http://127.0.0.1:1/")
    assert transport_cause(caught.value) == "connection refused"
