"""The time source of the HubSpot client, injectable so tests never sleep for real.

`SystemClock` is the real one. A test passes its own object with the same three methods whose
`sleep` advances a counter instead of waiting.
"""

from __future__ import annotations

import asyncio
import math
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """What the rate limiter and the retry policy need to know about time."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back; only differences mean anything."""
        ...

    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` (or pretend to)."""
        ...


class SystemClock:
    """The process's real clocks and asyncio's sleep."""

    def monotonic(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()

    def now(self) -> datetime:
        """The current time in UTC."""
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        """`asyncio.sleep`, never negative."""
        await asyncio.sleep(max(0.0, seconds))


async def sleep_or_change(clock: Clock, changed: asyncio.Event, delay: float) -> None:
    """Sleep `delay` seconds on `clock` (for ever when infinite), or less if `changed` is set
    first: a waiter that something else may release early."""
    woken = asyncio.ensure_future(changed.wait())
    if math.isinf(delay):
        await woken
        return
    sleeping = asyncio.ensure_future(clock.sleep(delay))
    try:
        await asyncio.wait((woken, sleeping), return_when=asyncio.FIRST_COMPLETED)
    finally:
        woken.cancel()
        sleeping.cancel()
