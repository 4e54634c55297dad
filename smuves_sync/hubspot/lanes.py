"""Request chains that share a portal's budget, and the room the longest of them need.

A listing is a chain: each page's answer names the next page, so a listing sends one request
at a time, one every `cadence` seconds (HubSpot's answer plus the caller's work between two
pages), however much of the budget is free. When a portal's types are fetched at once, the
listing with the most time still to go is the critical path: every second it waits is a
second added to the end of the whole fetch, while a short listing that waits a little still
ends before the long one.

So each listing holds a `Lane`: how many requests it still has to send, and how fast it sends
them when nothing holds it back; the two make the time it still needs. A request may take a
slot only if it leaves room, in every rate-limit window it falls into, for what the lanes with
more time to go ("more urgent") will send within that window (`reserved`). A waiting lane is
due at once, so a freed slot goes to the most urgent waiter; a lane whose request is in flight
is due one cadence after its last one. A lane that has not been heard of for a while (its
caller stopped or is backing off) is idle and reserves nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

# Until a lane has sent twice, assume it comes back this fast (a guess on the eager side: the
# cost is a short-lived over-reservation, never a 429).
DEFAULT_CADENCE_SECONDS = 0.1
# How much one gap moves a lane's cadence estimate.
_SMOOTHING = 0.3
# A lane silent for this many cadences (and at least `_IDLE_MIN_SECONDS`) reserves nothing.
_IDLE_CADENCES = 4
_IDLE_MIN_SECONDS = 1.0


class Lane:
    """One request chain of a portal: its requests still to go, and its pace."""

    def __init__(self, remaining: int, now: float, on_change: Callable[[], None]) -> None:
        self.remaining = max(0, remaining)
        self.cadence: float | None = None
        self.waiting = False
        self.closed = False
        self._last_grant: float | None = None
        self._last_seen = now
        self._on_change = on_change

    def __repr__(self) -> str:
        cadence = f"{self.cadence:.3f}s" if self.cadence is not None else "?"
        return f"Lane(remaining={self.remaining}, cadence={cadence})"

    def expect(self, remaining: int) -> None:
        """Set how many requests the chain still has to send, counting its next one."""
        remaining = max(0, remaining)
        if remaining != self.remaining:
            self.remaining = remaining
            self._on_change()

    def close(self) -> None:
        """The chain is finished (or abandoned): it reserves nothing any more."""
        if not self.closed:
            self.closed = True
            self._on_change()

    # -- used by the budget ---------------------------------------------------------------------

    def arrived(self, now: float) -> None:
        """A request of the chain starts waiting for a slot; learn the chain's pace from it."""
        if self._last_grant is not None:
            gap = max(now - self._last_grant, 0.001)
            previous = gap if self.cadence is None else self.cadence
            self.cadence = (1 - _SMOOTHING) * previous + _SMOOTHING * gap
        self._last_seen = now
        self.waiting = True

    def granted(self, now: float) -> None:
        """A request of the chain got its slot."""
        self.waiting = False
        self.remaining = max(0, self.remaining - 1)
        self._last_grant = self._last_seen = now

    def idle_at(self, cadence: float) -> float:
        """When a silent lane stops reserving (a waiting lane never does)."""
        if self.waiting:
            return math.inf
        return self._last_seen + max(_IDLE_CADENCES * cadence, _IDLE_MIN_SECONDS)

    def sends_until(self, now: float, until: float, cadence: float) -> int:
        """How many requests the chain is expected to send from `now` up to `until`."""
        due = now
        if not self.waiting and self._last_grant is not None:
            due = max(now, self._last_grant + cadence)
        if until < due or self.remaining == 0:
            return 0
        return min(self.remaining, math.floor((until - due) / cadence) + 1)


def reserved(paced: Iterable[tuple[Lane, float]], now: float, until: float) -> int:
    """Requests the lanes are expected to send from `now` up to `until`, each at its pace."""
    return sum(lane.sends_until(now, until, pace) for lane, pace in paced)
