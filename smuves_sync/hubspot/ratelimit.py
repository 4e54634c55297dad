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

On a short-window 429 (`TEN_SECONDLY_ROLLING`, `SECONDLY`) the whole portal pauses: for
`Retry-After` when HubSpot sends it, else until our oldest request in the window has left it.

Daily limit: the headers give the daily allowance and what is left, not when it resets.
HubSpot resets it at midnight in the portal's time zone; we assume the time zone given to the
budget (UTC unless the caller knows better). Waking too early costs one request that answers
429 DAILY again, nothing more.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from email.utils import parsedate_to_datetime

from smuves_sync.hubspot.clock import Clock, SystemClock

log = logging.getLogger(__name__)

HEADER_MAX = "X-HubSpot-RateLimit-Max"
HEADER_REMAINING = "X-HubSpot-RateLimit-Remaining"
HEADER_INTERVAL_MS = "X-HubSpot-RateLimit-Interval-Milliseconds"
HEADER_SECONDLY = "X-HubSpot-RateLimit-Secondly"
HEADER_SECONDLY_REMAINING = "X-HubSpot-RateLimit-Secondly-Remaining"
HEADER_DAILY = "X-HubSpot-RateLimit-Daily"
HEADER_DAILY_REMAINING = "X-HubSpot-RateLimit-Daily-Remaining"

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
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        limits = ", ".join(f"{w.limit}/{w.seconds:g}s" for w in self._windows.values())
        return f"PortalBudget(portal_id={self.portal_id}, limits=[{limits}])"

    # -- before a request ---------------------------------------------------------------------

    async def acquire(self) -> None:
        """Wait until one more request fits every window (and any 429 pause), then count it."""
        async with self._lock:
            while True:
                now = self._clock.monotonic()
                delay = self._delay(now)
                if delay <= 0:
                    break
                self.stats.waited_seconds += delay
                await self._clock.sleep(delay)
            self._sent.append(now)
            self.stats.granted += 1

    def daily_resets_at(self) -> datetime | None:
        """When the spent daily budget comes back, or None if it is not known to be spent."""
        if self._daily_resets_at is not None and self._clock.now() >= self._daily_resets_at:
            self._daily_resets_at = None
        return self._daily_resets_at

    # -- after a response ---------------------------------------------------------------------

    def observe(self, headers: Mapping[str, str]) -> None:
        """Learn the portal's limits and usage from a response's rate-limit headers."""
        now = self._clock.monotonic()
        interval_ms = _int_header(headers, HEADER_INTERVAL_MS)
        self._learn(
            now,
            interval_ms / 1000 if interval_ms else DEFAULT_INTERVAL_SECONDS,
            _int_header(headers, HEADER_MAX),
            _int_header(headers, HEADER_REMAINING),
        )
        self._learn(
            now,
            1.0,
            _int_header(headers, HEADER_SECONDLY),
            _int_header(headers, HEADER_SECONDLY_REMAINING),
        )
        daily_left = _int_header(headers, HEADER_DAILY_REMAINING)
        if daily_left is not None and daily_left <= 0:
            self.daily_limit_reached(None)

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

    def _delay(self, now: float) -> float:
        if not self._pacing:
            return 0.0
        delay = self._blocked_until - now
        longest = max(self._windows)
        while self._sent and self._sent[0] <= now - longest - self._margin_for(longest):
            self._sent.popleft()
        for window in self._windows.values():
            delay = max(delay, self._window_delay(now, window))
        return delay

    def _window_delay(self, now: float, window: _Window) -> float:
        span = window.seconds + self._margin_for(window.seconds)
        horizon = now - span
        in_window = [t for t in self._sent if t > horizon]
        foreign = window.foreign if window.foreign_until > now else 0
        if len(in_window) + foreign < window.limit:
            return 0.0
        # Wait for the next moment the count drops: our oldest send leaves, or the foreign
        # estimate expires. `acquire` re-checks after every wait.
        candidates = [in_window[0] + span - now] if in_window else []
        if foreign:
            candidates.append(window.foreign_until - now)
        return max(min(candidates), 0.001)


class RateLimitRegistry:
    """One `PortalBudget` per portal id; create one per process and pass it to every client."""

    def __init__(self, clock: Clock | None = None, *, pacing: bool = True) -> None:
        self.clock: Clock = clock or SystemClock()
        self.pacing = pacing
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


def next_midnight(now: datetime, zone: tzinfo) -> datetime:
    """The first midnight in `zone` strictly after `now`, in UTC."""
    local = now.astimezone(zone)
    tomorrow = datetime.combine(local.date() + timedelta(days=1), time(0), tzinfo=zone)
    return tomorrow.astimezone(UTC)


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta seconds or an HTTP date)."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        log.debug("ignoring unreadable %s header %r", name, value[:20])
        return None
