"""Pacing HubSpot requests so that 429s stay rare, with one budget per portal.

HubSpot limits each portal to `Max` requests per rolling `Interval-Milliseconds` (100 or 190
per 10 s for private apps), sometimes a per-second limit, and a daily number. Every response
says where the portal stands in `X-HubSpot-RateLimit-*` headers.

`RateLimitRegistry` is owned by the caller (one per process and event loop, passed to every
client) and hands out one `PortalBudget` per portal id, so all concurrent fetches of a portal
share one budget. A budget keeps the send times of its recent requests and lets a request go
only while every known window W has room: `count(sends in the last W + margin) + foreign < Max`.
The margin, max(3 % of W, 0.1 s), absorbs the difference between when we send and when HubSpot
counts. `foreign` is the part of HubSpot's count (`Max - Remaining`) that this process did not
send — other processes sharing the portal — and expires one window after it was seen.

Concurrent fetches of a portal are request chains (`lanes`): when they contend for the budget,
the chain with the most time still to go (its requests to go at its own pace) is served first
and the others leave it room, so the fetch's longest listing (its critical path) is the one
that does not wait. A request without a lane (a count) only needs the window to have room.

On a short-window 429 (`TEN_SECONDLY_ROLLING`, `SECONDLY`) the whole portal pauses: for
`Retry-After` when HubSpot sends it (the client caps it, `hubspot_max_retry_after_seconds`),
else until our oldest request in the window has left it.

Daily limit: the headers give the daily allowance and what is left, not when it resets.
HubSpot resets it at midnight in the portal's time zone; we assume the time zone given to the
budget (UTC unless the caller knows better). Waking too early costs one request that answers
429 DAILY again, nothing more. A DAILY `Retry-After` is honoured up to `MAX_DAILY_RESET_SECONDS`;
one further away is refused as malformed and the next midnight is used instead. Reading the
headers is `limit_headers`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from smuves_sync.hubspot.clock import Clock, SystemClock, sleep_or_change
from smuves_sync.hubspot.lanes import DEFAULT_CADENCE_SECONDS, Lane, reserved
from smuves_sync.hubspot.limit_headers import (
    LimitHeaders,
    next_midnight,
)
from smuves_sync.hubspot.outage import HubSpotOutage

__all__ = ["BudgetStats", "PortalBudget", "RateLimitRegistry"]

log = logging.getLogger(__name__)

# Lanes are given room to end this share of the way to the earliest the portal can be done.
_PLAN_AHEAD = 0.9

# Until a response tells us otherwise, assume HubSpot's smallest private-app allowance.
DEFAULT_LIMIT = 100
DEFAULT_INTERVAL_SECONDS = 10.0


@dataclass(slots=True)
class BudgetStats:
    """What a budget did, for benchmarks and logs."""

    granted: int = 0
    waited_seconds: float = 0.0
    rate_limited: int = 0


@dataclass(slots=True)
class _Window:
    seconds: float
    limit: int
    assumed: bool = False  # our default, not yet confirmed by a header
    foreign: int = 0
    foreign_until: float = 0.0


class PortalBudget:
    """The request budget of one portal, shared by every fetch of it in this process."""

    def __init__(
        self,
        portal_id: int,
        clock: Clock,
        *,
        pacing: bool = True,
        margin: float = 0.03,
        min_margin_seconds: float = 0.1,
        timezone: tzinfo = UTC,
    ) -> None:
        self.portal_id = portal_id
        self.timezone = timezone
        self.stats = BudgetStats()
        self._clock = clock
        self._pacing = pacing
        self._margin = margin
        self._min_margin = min_margin_seconds
        self._windows: dict[float, _Window] = {
            DEFAULT_INTERVAL_SECONDS: _Window(DEFAULT_INTERVAL_SECONDS, DEFAULT_LIMIT, assumed=True)
        }
        self._sent: deque[float] = deque()
        self._blocked_until = 0.0
        self._daily_resets_at: datetime | None = None
        self._lanes: list[Lane] = []
        # Set (and replaced) whenever a waiting request may have become able to go.
        self._changed = asyncio.Event()

    def __repr__(self) -> str:
        limits = ", ".join(f"{w.limit}/{w.seconds:g}s" for w in self._windows.values())
        return f"PortalBudget(portal_id={self.portal_id}, limits=[{limits}])"

    # -- before a request ---------------------------------------------------------------------

    def lane(self, remaining: int = 1) -> Lane:
        """A new request chain of this portal, `remaining` requests long; close it when done."""
        lane = Lane(remaining, self._clock.monotonic(), self._wake_waiters)
        self._lanes = [known for known in self._lanes if not known.closed]
        self._lanes.append(lane)
        return lane

    def lanes(self) -> tuple[Lane, ...]:
        """The lanes still open."""
        return tuple(lane for lane in self._lanes if not lane.closed)

    async def acquire(self, lane: Lane | None = None) -> None:
        """Wait until one more request fits every window (and any 429 pause), then count it.

        With `lane`, the request also leaves room for the more urgent lanes.
        """
        started = self._clock.monotonic()
        if lane is not None:
            lane.arrived(started)
        try:
            while True:
                now = self._clock.monotonic()
                delay = self._delay(now, lane)
                if delay <= 0:
                    break
                await self._wait(delay)
        finally:
            if lane is not None:
                lane.waiting = False
        self._sent.append(now)
        self.stats.granted += 1
        self.stats.waited_seconds += now - started
        if lane is not None:
            lane.granted(now)
        # The lane is due later now, which may leave room for a less urgent waiter.
        self._wake_waiters()

    def daily_resets_at(self) -> datetime | None:
        """When the spent daily budget comes back, or None if it is not known to be spent."""
        if self._daily_resets_at is not None and self._clock.now() >= self._daily_resets_at:
            self._daily_resets_at = None
        return self._daily_resets_at

    # -- after a response ---------------------------------------------------------------------

    def observe(self, headers: Mapping[str, str]) -> None:
        """Learn the portal's limits and usage from a response's rate-limit headers."""
        now = self._clock.monotonic()
        seen = LimitHeaders.of(headers)
        self._learn(
            now, seen.interval_seconds or DEFAULT_INTERVAL_SECONDS, seen.limit, seen.remaining
        )
        self._learn(now, 1.0, seen.secondly, seen.secondly_remaining)
        if seen.daily_remaining is not None and seen.daily_remaining <= 0:
            self.daily_limit_reached(None)
        self._wake_waiters()  # a learned limit may be higher than the one they wait on

    def rate_limited(self, policy: str | None, retry_after: float | None) -> float:
        """Note a short-window 429; return how long the caller itself must still wait.

        With pacing, the whole portal pauses and `acquire` does the waiting (0 is returned).
        Without pacing (a baseline for benchmarks), only the caller waits: `Retry-After` or 1 s.
        """
        self.stats.rate_limited += 1
        if not self._pacing:
            # The plain client of the baseline: Retry-After, else one second, for this request.
            return retry_after if retry_after is not None else 1.0
        now = self._clock.monotonic()
        window = 1.0 if policy == "SECONDLY" else self._main_window().seconds
        if retry_after is not None:
            delay = retry_after
        else:
            horizon = now - window - self._margin_for(window)
            in_window = [t for t in self._sent if t > horizon]
            # The oldest of our requests in the window is the next one HubSpot forgets.
            delay = in_window[0] + window + self._margin_for(window) - now if in_window else 0
            delay = min(max(delay, window / 10), window)
        log.info("portal %s rate limited (%s); pausing %.2fs", self.portal_id, policy or "?", delay)
        self._blocked_until = max(self._blocked_until, now + delay)
        return 0.0

    def daily_limit_reached(self, retry_after: float | None) -> datetime:
        """Record that the daily budget is spent; return when it resets."""
        now = self._clock.now()
        if retry_after is not None:
            resets_at = now + timedelta(seconds=retry_after)
        else:
            resets_at = next_midnight(now, self.timezone)
        self._daily_resets_at = resets_at
        return resets_at

    # -- internals ----------------------------------------------------------------------------

    def _main_window(self) -> _Window:
        return max(self._windows.values(), key=lambda w: w.seconds)

    def _margin_for(self, seconds: float) -> float:
        return max(seconds * self._margin, self._min_margin)

    def _learn(self, now: float, seconds: float, limit: int | None, remaining: int | None) -> None:
        if limit is None or limit <= 0:
            return
        if seconds != DEFAULT_INTERVAL_SECONDS and seconds != 1.0:
            # HubSpot told us its real window: the assumed default no longer applies.
            default = self._windows.get(DEFAULT_INTERVAL_SECONDS)
            if default is not None and default.assumed:
                del self._windows[DEFAULT_INTERVAL_SECONDS]
        window = self._windows.get(seconds)
        if window is None:
            window = self._windows[seconds] = _Window(seconds, limit)
        window.limit = limit
        window.assumed = False
        if remaining is None:
            return
        # Everything HubSpot counted in the window that we cannot account for was sent by
        # someone else sharing the portal. Our own count errs high (it includes requests still
        # in flight), so in a lone process this stays at zero.
        ours = self._count_since(now - seconds - self._margin_for(seconds))
        window.foreign = max(0, (limit - remaining) - ours)
        window.foreign_until = now + seconds

    def _count_since(self, horizon: float) -> int:
        return sum(1 for t in self._sent if t > horizon)

    def _wake_waiters(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def _wait(self, delay: float) -> None:
        """Sleep `delay` seconds, or less if the budget changes first."""
        await sleep_or_change(self._clock, self._changed, delay)

    def _delay(self, now: float, lane: Lane | None) -> float:
        """0 if a request may go now, else how long until the answer may change by itself."""
        if not self._pacing:
            return 0.0
        delay = self._blocked_until - now
        longest = max(self._windows)
        while self._sent and self._sent[0] <= now - longest - self._margin_for(longest):
            self._sent.popleft()
        paced = self._paces(self._more_urgent(lane, now), now)
        for window in self._windows.values():
            delay = max(delay, self._window_delay(now, window, paced))
        return delay

    def _active(self, now: float) -> list[Lane]:
        return [
            lane
            for lane in self._lanes
            if not lane.closed and lane.idle_at(self._cadence(lane)) > now
        ]

    def _more_urgent(self, lane: Lane | None, now: float) -> list[Lane]:
        """The open, active lanes with more time still to go than `lane`."""
        if lane is None:
            # A request outside any listing (a count) leaves room for none: there are a few
            # per job, and the job's own listing cannot start before they are answered.
            return []
        floor = self._time_to_go(lane)
        return [
            other
            for other in self._active(now)
            if other is not lane and self._time_to_go(other) > floor
        ]

    def _paces(self, urgent: list[Lane], now: float) -> list[tuple[Lane, float]]:
        """Each urgent lane with the pace worth reserving for it (seconds per request).

        The portal is done no sooner than its longest lane at its own pace, nor than all the
        lanes' requests at the allowed rate. A lane is given room for the pace that ends it a
        little before that horizon, never more than its own: when the rate limit rather than
        one listing decides the end, the longest lane does not hold slots it need not have.
        """
        if not urgent:
            return []
        active = self._active(now)
        main = self._main_window()
        span = main.seconds + self._margin_for(main.seconds)
        foreign = main.foreign if main.foreign_until > now else 0
        rate = max(main.limit - foreign, 1) / span
        horizon = max(
            sum(lane.remaining for lane in active) / rate,
            max(self._time_to_go(lane) for lane in active),
        )
        return [
            (lane, max(self._cadence(lane), _PLAN_AHEAD * horizon / lane.remaining))
            for lane in urgent
        ]

    def _time_to_go(self, lane: Lane) -> float:
        # Requests times pace: a chain of quick requests may have more of them and still end
        # sooner. Until paces are measured this orders lanes by their requests to go.
        return lane.remaining * self._cadence(lane)

    def _cadence(self, lane: Lane) -> float:
        return lane.cadence if lane.cadence is not None else self._default_cadence()

    def _default_cadence(self) -> float:
        # A lane not yet measured is assumed as quick as the quickest measured one.
        known = [lane.cadence for lane in self._lanes if lane.cadence is not None]
        return min(known, default=DEFAULT_CADENCE_SECONDS)

    def _window_delay(self, now: float, window: _Window, urgent: list[tuple[Lane, float]]) -> float:
        span = window.seconds + self._margin_for(window.seconds)
        horizon = now - span
        in_window = [t for t in self._sent if t > horizon]
        foreign = window.foreign if window.foreign_until > now else 0
        # Slots for our requests still in the window and the urgent lanes' coming ones,
        # besides this request.
        room = window.limit - foreign - 1
        if len(in_window) <= room and self._leaves_room(now, span, in_window, room, urgent):
            return 0.0
        # Wait for the next moment the count drops: our oldest send leaves, the foreign
        # estimate expires, or an urgent lane falls idle. Lanes wake the waiters themselves
        # when they send, change or close, and `acquire` re-checks after every wait.
        candidates = [in_window[0] + span - now] if in_window else []
        if foreign:
            candidates.append(window.foreign_until - now)
        candidates += [lane.idle_at(self._cadence(lane)) - now for lane, _ in urgent]
        soonest = min(candidates, default=math.inf)
        return max(soonest, 0.001)

    def _leaves_room(
        self,
        now: float,
        span: float,
        in_window: list[float],
        room: int,
        urgent: list[tuple[Lane, float]],
    ) -> bool:
        """Whether one more request now still leaves `urgent` their sends in every window.

        The request stays in the window until `now + span`. Until then, at each moment just
        before one of our past sends leaves the window (and at the end), the sends still in it
        plus what the urgent lanes will have sent by then must fit in `room`.
        """
        if not urgent:
            return True
        moments = [(sent + span, len(in_window) - k) for k, sent in enumerate(in_window)]
        moments.append((now + span, 0))
        for until, still_in in ((now, len(in_window)), *moments):
            if still_in + reserved(urgent, now, until) > room:
                return False
        return True


class RateLimitRegistry:
    """One `PortalBudget` per portal id, and the process's one `HubSpotOutage` (HubSpot's host
    is every portal's); create one per process and pass it to every client."""

    def __init__(self, clock: Clock | None = None, *, pacing: bool = True) -> None:
        self.clock: Clock = clock or SystemClock()
        self.pacing = pacing
        self.outage = HubSpotOutage(self.clock)
        self._budgets: dict[int, PortalBudget] = {}

    def budget(self, portal_id: int, *, timezone: tzinfo | None = None) -> PortalBudget:
        """The budget of `portal_id`, created on first use; `timezone` updates its time zone."""
        budget = self._budgets.get(portal_id)
        if budget is None:
            budget = self._budgets[portal_id] = PortalBudget(
                portal_id, self.clock, pacing=self.pacing
            )
        if timezone is not None:
            budget.timezone = timezone
        return budget
