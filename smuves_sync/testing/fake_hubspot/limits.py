"""HubSpot's request limits for one portal: a 10-second rolling window, an optional secondly
window and a daily budget that resets at midnight UTC, with the X-HubSpot-RateLimit-* headers.

Time comes from an injected clock (seconds since the epoch), so tests move it by hand.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from smuves_sync.testing.fake_hubspot.spec import ServerConfig

TEN_SECONDLY = "TEN_SECONDLY_ROLLING"
SECONDLY = "SECONDLY"
DAILY = "DAILY"
_WINDOW_S = 10.0
_DAY_S = 86_400


class FakeClock:
    """A clock that only moves when told to: `clock.advance(10.5)`."""

    def __init__(self, now: float = 1_767_225_600.0) -> None:  # 2026-01-01T00:00:00Z
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.now += seconds


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a request may be served; `policy` names the limit it hit, if any."""

    policy: str | None
    headers: dict[str, str] = field(default_factory=dict)
    retry_after_s: int | None = None


class PortalLimiter:
    """Counts one portal's admitted requests; refused requests are not counted."""

    def __init__(self, config: ServerConfig, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self._ten: deque[float] = deque()
        self._second: deque[float] = deque()
        self._day = -1
        self._day_count = 0

    def admit(self) -> Verdict:
        """Admit (and count) one request now, or name the limit that refuses it."""
        now = self.clock()
        config = self.config
        day = int(now // _DAY_S)
        if day != self._day:
            self._day, self._day_count = day, 0
        _expire(self._ten, now - _WINDOW_S)
        _expire(self._second, now - 1.0)
        policy: str | None = None
        retry_after = 0.0
        if config.daily_limit is not None and self._day_count >= config.daily_limit:
            policy, retry_after = DAILY, (day + 1) * _DAY_S - now
        elif config.secondly_limit is not None and len(self._second) >= config.secondly_limit:
            policy, retry_after = SECONDLY, self._second[0] + 1.0 - now
        elif config.ten_second_limit is not None and len(self._ten) >= config.ten_second_limit:
            policy, retry_after = TEN_SECONDLY, self._ten[0] + _WINDOW_S - now
        if policy is None:
            self._day_count += 1
            self._ten.append(now)
            self._second.append(now)
        retry = max(1, math.ceil(retry_after)) if policy and config.send_retry_after else None
        return Verdict(policy, self._headers(), retry)

    def _headers(self) -> dict[str, str]:
        config = self.config
        headers: dict[str, str] = {}
        if config.daily_limit is not None:
            headers["X-HubSpot-RateLimit-Daily"] = str(config.daily_limit)
            remaining = max(0, config.daily_limit - self._day_count)
            headers["X-HubSpot-RateLimit-Daily-Remaining"] = str(remaining)
        if config.ten_second_limit is not None:
            headers["X-HubSpot-RateLimit-Interval-Milliseconds"] = str(int(_WINDOW_S * 1000))
            headers["X-HubSpot-RateLimit-Max"] = str(config.ten_second_limit)
            remaining = max(0, config.ten_second_limit - len(self._ten))
            headers["X-HubSpot-RateLimit-Remaining"] = str(remaining)
        if config.secondly_limit is not None:
            headers["X-HubSpot-RateLimit-Secondly"] = str(config.secondly_limit)
            remaining = max(0, config.secondly_limit - len(self._second))
            headers["X-HubSpot-RateLimit-Secondly-Remaining"] = str(remaining)
        return headers


def _expire(window: deque[float], cutoff: float) -> None:
    while window and window[0] <= cutoff:
        window.popleft()
