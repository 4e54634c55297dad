"""The one retry policy of the HubSpot client.

Three kinds of "try again", kept apart on purpose:

- HubSpot unreachable (`HubSpotUnavailable`: no connection, a dropped one, a timeout, 502,
  503, 504) is the process's outage (`outage`), not the request's failure: the request waits
  on the shared outage state with every other request, spending no attempt, until HubSpot
  answers again or the outage has lasted `outage_max_seconds` (then `HubSpotUnreachable`).
  Only when HubSpot answered other requests between two of its failures does a request count
  them as its own, as below.
- Other transient failures (`HubSpotRetryableError`: 500 and the rest of 5xx, 423, 477) are
  retried by tenacity with exponential backoff, jitter and a cap, at most `max_attempts`
  times in all.
- Short-window 429s (`HubSpotRateLimited`) are not failures: the request waits as the budget
  says and goes again without spending an attempt. A run of more than `max_rate_limit_waits`
  429s in a row gives up with the 429 (still retryable, still no attempt for the queue) rather
  than looping for ever.

Everything else — 400, 401, 403, 404, malformed bodies, and a spent daily budget
(`HubSpotDailyLimitReached`) — goes straight to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from smuves_sync.errors import (
    HubSpotDailyLimitReached,
    HubSpotError,
    HubSpotRateLimited,
    HubSpotRetryableError,
    HubSpotUnavailable,
    HubSpotUnreachable,
)
from smuves_sync.hubspot.clock import Clock
from smuves_sync.hubspot.outage import HubSpotOutage, OutageTooLong, duration_words
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently one HubSpot request is tried."""

    max_attempts: int = 6
    initial_backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    max_rate_limit_waits: int = 50
    outage_max_seconds: float = 3600.0

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """`hubspot_max_retries` retries after the first try; outages waited out for
        `hubspot_outage_max_seconds`."""
        return cls(
            max_attempts=settings.hubspot_max_retries + 1,
            outage_max_seconds=settings.hubspot_outage_max_seconds,
        )

    def outage_wait(self, failures: int) -> float:
        """How long an outage waits after its `failures`-th failure: the backoff, no jitter
        (one probe goes at a time, so nobody needs spreading out)."""
        return min(self.initial_backoff_seconds * 2.0 ** (failures - 1), self.max_backoff_seconds)

    async def run(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        clock: Clock,
        on_rate_limited: Callable[[HubSpotRateLimited], float],
        outage: HubSpotOutage | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> T:
        """Call `send` until it succeeds or fails for good.

        `on_rate_limited` is told of each short-window 429 and returns how long this request
        must still sleep itself (the shared budget may already hold every request back).
        `outage`: the process's outage state, which the request waits on and tells of what it
        found (without it, HubSpot unreachable is retried as any transient failure);
        `context` (portal_id, content_type) is named by `HubSpotUnreachable`.
        """
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(HubSpotRetryableError),
            stop=stop_after_attempt(self.max_attempts),
            # initial·2^(n-1) capped, plus up to `initial` of jitter so clients spread out.
            wait=wait_exponential(
                multiplier=self.initial_backoff_seconds, max=self.max_backoff_seconds
            )
            + wait_random(0, self.initial_backoff_seconds),
            sleep=clock.sleep,
            before_sleep=_log_retry,
            reraise=True,
        )
        waits = _Waits(self, send, clock, on_rate_limited, outage, dict(context or {}))
        return await retrying(waits.through)


@dataclass(slots=True)
class _Waits(Generic[T]):
    """One request's waits that spend no attempt: 429 pauses and the process's outage."""

    policy: RetryPolicy
    send: Callable[[], Awaitable[T]]
    clock: Clock
    on_rate_limited: Callable[[HubSpotRateLimited], float]
    outage: HubSpotOutage | None
    context: dict[str, Any]

    async def through(self) -> T:
        """Send until an answer, or an error that is not a wait (tenacity's to retry)."""
        waits = 0
        answers: int | None = None  # HubSpot's answers when this request last failed
        while True:
            try:
                return await self._once()
            except HubSpotDailyLimitReached:
                raise
            except HubSpotRateLimited as exc:
                waits += 1
                if waits > self.policy.max_rate_limit_waits:
                    raise
                delay = self.on_rate_limited(exc)
                if delay > 0:
                    await self.clock.sleep(delay)
            except HubSpotUnavailable:
                if self.outage is None:
                    raise
                if answers is not None and self.outage.answers != answers:
                    raise  # HubSpot answered others meanwhile: this request's own trouble
                answers = self.outage.answers

    async def _once(self) -> T:
        outage = self.outage
        if outage is None:
            return await self.send()
        try:
            probe = await outage.admit(self.policy.outage_max_seconds)
        except OutageTooLong as exc:
            raise self._unreachable(exc) from None
        try:
            result = await self.send()
        except HubSpotUnavailable as exc:
            outage.failed(exc.cause, probe=probe, backoff=self.policy.outage_wait)
            raise
        except HubSpotError as exc:
            # A spent daily budget may be known without asking: only an answer counts.
            if not isinstance(exc, HubSpotDailyLimitReached) or exc.status is not None:
                outage.answered()
            raise
        finally:
            outage.release(probe)
        outage.answered()
        return result

    def _unreachable(self, exc: OutageTooLong) -> HubSpotUnreachable:
        status = exc.status
        return HubSpotUnreachable(
            f"HubSpot was unreachable for {duration_words(status.lasted)} ({status.cause})",
            lasted=status.lasted,
            cause=status.cause,
            **self.context,
        )


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.warning(
        "HubSpot request failed (try %d), retrying in %.2fs: %s", state.attempt_number, wait, error
    )
