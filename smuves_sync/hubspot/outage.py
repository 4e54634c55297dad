"""HubSpot unreachable: one outage state per process, shared by every request of every portal.

An outage is HubSpot's host being down or cut off (no connection, a dropped one, a timeout, or
its front answering 502/503/504), not one job's fault, and not one portal's: every portal is
served by the same host, so when one request finds it unreachable the others would only find
the same. The state lives beside the rate-limit budgets (`RateLimitRegistry.outage`, one per
process) so that every client of the process waits on it:

- The first failure starts the outage (`failed`). From then on requests wait in `admit`
  instead of each trying: at the next-try time one of them goes alone, as the probe. A probe
  that fails pushes the next try further out (the retry policy's backoff: 0.5 s, 1 s, 2 s …
  capped); any answer that is not an outage's (`answered`) ends it and lets everyone go.
- Waiting spends no attempt, neither the request's nor the job's, as a 429 does not.
- `admit` gives up with `OutageTooLong` once the outage has lasted `max_seconds`
  (``SMUVES_HUBSPOT_OUTAGE_MAX_SECONDS``): the requests waiting fail, and so do new ones,
  except a probe when one is due, so that the process notices when HubSpot is back.
- The log tells it once when it starts, at most once a minute while it lasts, and once when
  it ends; the rest is at debug level. `status()` is what a display shows instead of a line
  per retry (`smuves sync`'s status line).

A request that keeps failing while HubSpot answers other requests is not an outage: the retry
policy counts those failures as the request's own (see `retry`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx

from smuves_sync.hubspot.clock import Clock, sleep_or_change

log = logging.getLogger(__name__)

# While an outage lasts, the log is reminded at most this often (seconds on the clock).
_REMIND_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class OutageStatus:
    """Where an outage stands: since when, how, and when HubSpot is asked next."""

    since: datetime
    cause: str
    lasted: float  # seconds
    next_try_in: float  # seconds; 0 when a probe is out

    def line(self) -> str:
        """One line for a person watching: since when, and when the next try is."""
        since = self.since.astimezone().strftime("%H:%M:%S")
        if self.next_try_in <= 0:
            return f"HubSpot unreachable since {since} ({self.cause}), trying again now"
        return (
            f"HubSpot unreachable since {since} ({self.cause}), "
            f"next try in {math.ceil(self.next_try_in)} s"
        )


class OutageTooLong(Exception):
    """The outage has lasted past the bound; the request is not sent."""

    def __init__(self, status: OutageStatus) -> None:
        super().__init__(status.line())
        self.status = status


def transport_cause(error: httpx.TransportError) -> str:
    """How a request failed to reach HubSpot, in the words a person checks the network with."""
    text = str(error).lower()
    causes: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and len(causes) < 10:  # the OS's error sits a few causes down
        causes.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return "connection refused"
    if any(isinstance(cause, socket.gaierror) for cause in causes):
        return "host name not found"
    if isinstance(error, httpx.ConnectTimeout):
        return "connecting timed out"
    if isinstance(error, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(error, httpx.ConnectError):
        if "refused" in text:
            return "connection refused"
        if "name" in text or "resolution" in text or "nodename" in text:
            return "host name not found"
        return "could not connect"
    if isinstance(error, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return "connection dropped"
    return "connection failed"


def duration_words(seconds: float) -> str:
    """A duration as a person says it: "40 s", "12 min", "1 h", "1 h 5 min"."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" if minutes == 0 else f"{hours} h {minutes} min"


class HubSpotOutage:
    """Whether HubSpot is reachable, for every request of this process."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._since: float | None = None  # monotonic; None: no outage
        self._since_at: datetime | None = None
        self._cause = ""
        self._failures = 0  # the first failure and each failed probe
        self._next_try = 0.0
        self._probing = False
        self._waiting: deque[object] = deque()  # requests waiting, in the order they came
        self._reminded = 0.0
        # Answers HubSpot has given: a request that fails again after others were answered
        # fails on its own account.
        self.answers = 0
        self._changed = asyncio.Event()

    def status(self) -> OutageStatus | None:
        """The outage now, or None when HubSpot is reachable (as far as is known)."""
        if self._since is None or self._since_at is None:
            return None
        now = self._clock.monotonic()
        next_try = 0.0 if self._probing else max(self._next_try - now, 0.0)
        return OutageStatus(self._since_at, self._cause, now - self._since, next_try)

    async def admit(self, max_seconds: float) -> bool:
        """Wait until a request may be sent; True when it goes as the outage's probe (then
        `answered`, `failed` or `release` must follow). Raises `OutageTooLong` once the
        outage has lasted `max_seconds` and no probe is due.

        Probes go in the order the requests came: a request that fails as the probe and asks
        again queues behind the others, so one request that always fails cannot keep the
        others from showing that HubSpot answers."""
        if self._since is None:
            return False
        ticket = object()
        self._waiting.append(ticket)
        try:
            while self._since is not None:
                now = self._clock.monotonic()
                due = not self._probing and now >= self._next_try
                if due and self._waiting[0] is ticket:
                    self._probing = True
                    return True
                if now - self._since >= max_seconds:
                    status = self.status()
                    assert status is not None
                    raise OutageTooLong(status)
                give_up = self._since + max_seconds
                until = give_up if self._probing or due else min(self._next_try, give_up)
                await sleep_or_change(self._clock, self._changed, until - now)
            return False
        finally:
            first = self._waiting[0] is ticket
            self._waiting.remove(ticket)
            if first:
                self._wake()

    def answered(self) -> None:
        """HubSpot answered (anything but an outage's answer): the outage, if any, is over."""
        self.answers += 1
        if self._since is None:
            return
        lasted = self._clock.monotonic() - self._since
        log.warning("HubSpot reachable again after %s", duration_words(lasted))
        self._since = self._since_at = None
        self._failures = 0
        self._probing = False
        self._wake()

    def failed(self, cause: str, *, probe: bool, backoff: Callable[[int], float]) -> None:
        """A request found HubSpot unreachable (`cause`: how); `backoff(n)` is the wait after
        the outage's n-th failure. Requests sent before the outage began fail with it and
        add nothing: only its first failure and its probes move the next try."""
        now = self._clock.monotonic()
        self._cause = cause
        if self._since is None:
            self._since, self._since_at = now, self._clock.now()
            self._failures = 1
            self._next_try = now + backoff(1)
            self._reminded = now
            log.warning(
                "HubSpot unreachable (%s); requests wait, the next try in %.1f s",
                cause,
                backoff(1),
            )
        elif probe:
            self._failures += 1
            wait = backoff(self._failures)
            self._next_try = now + wait
            remind = now - self._reminded >= _REMIND_SECONDS
            if remind:
                self._reminded = now
            log.log(
                logging.WARNING if remind else logging.DEBUG,
                "HubSpot still unreachable after %s (%s, %d tries); the next try in %.0f s",
                duration_words(now - self._since),
                cause,
                self._failures,
                wait,
            )
        if probe:
            self._probing = False
        self._wake()

    def release(self, probe: bool) -> None:
        """The request ended without telling either way (cancelled, or never sent)."""
        if probe and self._probing:
            self._probing = False
            self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
