"""Contended budgets serve the request chain with the most requests to go (the critical path).

These run on a virtual-time event loop: many tasks wait on the budget and on the clock at
once, and each sees time pass as it would for real, without any real waiting.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx
import pytest

from smuves_sync.hubspot.lanes import Lane
from smuves_sync.hubspot.ratelimit import PortalBudget
from tests.unit.hubspot.conftest import PORTAL, rate_headers
from tests.unit.hubspot.virtual_time import LoopClock, VirtualTimeLoop, run

MARGIN = 0.3  # the budget's safety margin on a 10 s window (3 %)


def budget_with_limit(loop: VirtualTimeLoop, limit: int) -> PortalBudget:
    budget = PortalBudget(PORTAL, LoopClock(loop))
    budget.observe(httpx.Headers(rate_headers(limit, limit)))
    return budget


@dataclass
class Chain:
    """A listing: `requests` requests, one every `cadence` seconds when nothing holds it back."""

    requests: int
    cadence: float
    waited: float = 0.0
    granted_at: list[float] = field(default_factory=list)

    @property
    def ended_at(self) -> float:
        return self.granted_at[-1] + self.cadence

    async def run(self, budget: PortalBudget, *, use_lane: bool) -> None:
        loop = asyncio.get_running_loop()
        lane = budget.lane(self.requests) if use_lane else None
        try:
            for done in range(self.requests):
                if lane is not None:
                    lane.expect(self.requests - done)
                asked = loop.time()
                await budget.acquire(lane)
                self.granted_at.append(loop.time())
                self.waited += loop.time() - asked
                await asyncio.sleep(self.cadence)  # HubSpot answers; the caller reads the page
        finally:
            if lane is not None:
                lane.close()


def most_in_any_window(times: list[float], window: float = 10.0) -> int:
    return max(sum(1 for u in times if t <= u < t + window) for t in times)


def fetch(limit: int, chains: list[Chain], *, use_lanes: bool) -> float:
    """Run the chains at once through one budget; the time the last one ends."""
    loop = VirtualTimeLoop()
    budget = budget_with_limit(loop, limit)

    async def main() -> None:
        await asyncio.gather(*(chain.run(budget, use_lane=use_lanes) for chain in chains))

    try:
        run(loop, main())
    finally:
        loop.close()
    every = sorted(t for chain in chains for t in chain.granted_at)
    assert most_in_any_window(every) <= limit
    return max(chain.ended_at for chain in chains)


def test_the_longest_chain_never_waits_while_short_ones_absorb_the_waits() -> None:
    # 30 requests per 10 s. The long listing alone needs 20 s at its own pace (40 requests,
    # one per 0.5 s) and is the critical path: all 56 requests at the allowed rate need less.
    # Two short ones (8 requests, one per 0.1 s) could burst into the first window.
    long, shorts = Chain(40, 0.5), [Chain(8, 0.1), Chain(8, 0.1)]
    end = fetch(30, [long, *shorts], use_lanes=True)
    assert long.waited == 0
    assert long.ended_at == pytest.approx(20.0)
    assert all(short.waited > 0 for short in shorts)
    assert end == pytest.approx(20.0)

    # First come, first served (no lanes): the short ones fill the window, the long one stalls
    # until the window rolls on, and the whole fetch ends later.
    long, shorts = Chain(40, 0.5), [Chain(8, 0.1), Chain(8, 0.1)]
    fifo_end = fetch(30, [long, *shorts], use_lanes=False)
    assert long.waited > 3
    assert fifo_end > end + 3


def test_when_the_rate_limit_decides_the_end_the_long_chain_leaves_room_to_others() -> None:
    # 10 requests per 10 s: 50 requests need about 40 s whatever the order, while the long
    # listing alone would need 3 s. It is given room for the pace that ends it with the rest
    # (a bit ahead), not for its own: the short ones (the next job's counts, say) get slots
    # from the first window on instead of waiting for most of the long one to be done.
    long, shorts = Chain(30, 0.1), [Chain(10, 0.1), Chain(10, 0.1)]
    end = fetch(10, [long, *shorts], use_lanes=True)
    assert all(short.granted_at[0] < 10 for short in shorts)
    assert all(sum(1 for t in short.granted_at if t < 30) >= 3 for short in shorts)

    long, shorts = Chain(30, 0.1), [Chain(10, 0.1), Chain(10, 0.1)]
    assert end <= fetch(10, [long, *shorts], use_lanes=False)  # no slot left unused


def test_a_freed_slot_goes_to_the_waiter_with_most_requests_to_go(
    virtual_loop: VirtualTimeLoop,
) -> None:
    budget = budget_with_limit(virtual_loop, 10)
    order: list[str] = []

    async def ask(name: str, lane: Lane, after: float) -> None:
        await asyncio.sleep(after)
        await budget.acquire(lane)
        order.append(name)

    async def main() -> float:
        for _ in range(10):
            await budget.acquire()  # the window is full until 10 s + margin
        short, long = budget.lane(3), budget.lane(50)
        # The short chain asks first; both wait for the same slot.
        await asyncio.gather(ask("short", short, 0.1), ask("long", long, 0.2))
        return asyncio.get_running_loop().time()

    ended = run(virtual_loop, main())
    assert order == ["long", "short"]
    assert ended > 10 + MARGIN


def test_equal_chains_share_the_budget() -> None:
    chains = [Chain(20, 0.1), Chain(20, 0.1)]
    fetch(10, chains, use_lanes=True)
    first, second = (chain.ended_at for chain in chains)
    # Neither is starved: with the same work they end within a window of each other.
    assert abs(first - second) < 10 + MARGIN


def test_a_closed_lane_reserves_nothing(virtual_loop: VirtualTimeLoop) -> None:
    budget = budget_with_limit(virtual_loop, 10)

    async def main() -> float:
        long, short = budget.lane(100), budget.lane(10)
        long.close()
        for _ in range(10):
            await budget.acquire(short)
        return asyncio.get_running_loop().time()

    assert run(virtual_loop, main()) == 0.0


def test_a_silent_lane_stops_reserving_after_a_while(virtual_loop: VirtualTimeLoop) -> None:
    # A lane whose owner went quiet (a backoff, a crash that skipped `close`) must not hold the
    # portal back for long: it counts as idle a second after it was last heard of.
    budget = budget_with_limit(virtual_loop, 10)

    async def main() -> float:
        budget.lane(100)
        await budget.acquire(budget.lane(1))
        return asyncio.get_running_loop().time()

    assert run(virtual_loop, main()) == pytest.approx(1.0)


def test_a_closing_lane_wakes_the_requests_it_held_back(virtual_loop: VirtualTimeLoop) -> None:
    budget = budget_with_limit(virtual_loop, 10)

    async def main() -> float:
        long = budget.lane(100)
        loop = asyncio.get_running_loop()
        loop.call_later(0.25, long.close)
        await budget.acquire(budget.lane(1))
        return loop.time()

    assert run(virtual_loop, main()) == pytest.approx(0.25)


def test_a_request_outside_any_listing_only_needs_room_in_the_window(
    virtual_loop: VirtualTimeLoop,
) -> None:
    # A count gates the start of its job's listing; it does not wait behind the lanes.
    budget = budget_with_limit(virtual_loop, 10)

    async def main() -> list[float]:
        budget.lane(100)
        loop = asyncio.get_running_loop()
        times: list[float] = []
        for _ in range(11):
            await budget.acquire()
            times.append(loop.time())
        return times

    times = run(virtual_loop, main())
    assert times[:10] == [0.0] * 10
    assert times[10] == pytest.approx(10 + MARGIN)


def test_without_lanes_requests_go_first_come_first_served_up_to_the_limit(
    virtual_loop: VirtualTimeLoop,
) -> None:
    budget = budget_with_limit(virtual_loop, 10)

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        times: list[float] = []

        async def one() -> None:
            await budget.acquire()
            times.append(loop.time())

        await asyncio.gather(*(one() for _ in range(25)))
        return times

    times = run(virtual_loop, main())
    assert times[:10] == [0.0] * 10
    assert most_in_any_window(times) <= 10
    assert times[-1] == pytest.approx(2 * (10 + MARGIN))


def test_lane_pace_is_learned_from_the_gaps_between_its_requests() -> None:
    changes: list[int] = []
    lane = Lane(5, now=0.0, on_change=lambda: changes.append(1))
    lane.arrived(0.0)
    lane.granted(0.0)
    assert lane.cadence is None
    assert lane.remaining == 4
    lane.arrived(0.2)
    assert lane.cadence == pytest.approx(0.2)
    lane.granted(0.2)
    lane.arrived(0.3)
    assert lane.cadence == pytest.approx(0.7 * 0.2 + 0.3 * 0.1)
    lane.expect(4)
    lane.expect(4)
    lane.close()
    lane.close()
    assert len(changes) == 2  # a change of work and the close, once each


def test_lane_expected_sends_follow_its_pace_and_remaining_work() -> None:
    lane = Lane(3, now=0.0, on_change=lambda: None)
    lane.arrived(0.0)
    # Waiting: due at once, then one per cadence, never more than the work left.
    assert lane.sends_until(0.0, 0.0, 0.5) == 1
    assert lane.sends_until(0.0, 0.99, 0.5) == 2
    assert lane.sends_until(0.0, 100.0, 0.5) == 3
    lane.granted(0.0)
    # In flight: the next request is due one cadence after the last grant.
    assert lane.sends_until(0.1, 0.4, 0.5) == 0
    assert lane.sends_until(0.1, 0.5, 0.5) == 1
    assert lane.sends_until(0.1, 100.0, 0.5) == 2
