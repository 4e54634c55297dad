"""An event loop on virtual time, for tests of tasks that wait on each other and on the clock.

Whenever no task is ready to run, the loop's clock jumps straight to its next timer, so
`asyncio.sleep(10)` returns at once in real time while every task sees ten seconds pass, in
the right order. Unlike `FakeClock` (which adds every sleep to one counter), concurrent
sleepers overlap as they would for real. Only for code that does no real I/O.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    """Never blocks: the time the loop would have waited for its next timer just passes."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events: list[tuple[selectors.SelectorKey, int]] = super().select(0)
        if events:
            return events
        if timeout is None:
            raise RuntimeError("every task waits and no timer is set: the test is deadlocked")
        self._loop.advance(timeout)
        return events


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose `time()` is virtual and jumps to the next timer."""

    def __init__(self) -> None:
        self._virtual_now = 0.0
        super().__init__(selector=_JumpingSelector(self))

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        """Move the virtual clock forward."""
        self._virtual_now += max(0.0, seconds)


class LoopClock:
    """The HubSpot client's `Clock`, read from `loop` (a `VirtualTimeLoop`'s virtual time)."""

    start = datetime(2026, 3, 10, 15, 30, tzinfo=UTC)

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def monotonic(self) -> float:
        return self._loop.time()

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.monotonic())

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


def run(loop: asyncio.AbstractEventLoop, main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to completion on `loop`."""
    return loop.run_until_complete(main)
