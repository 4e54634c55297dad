"""The one retry policy of the HubSpot client.

Two kinds of "try again", kept apart on purpose:

- Transient failures (`HubSpotRetryableError`: transport errors, 5xx, 423, 477) are retried by
  tenacity with exponential backoff, jitter and a cap, at most `max_attempts` times in all.
- Short-window 429s (`HubSpotRateLimited`) are not failures: the request waits as the budget
  says and goes again without spending an attempt. A run of more than `max_rate_limit_waits`
  429s in a row gives up with the 429 (still retryable, still no attempt for the queue) rather
  than looping for ever.

Everything else — 400, 401, 403, 404, malformed bodies, and a spent daily budget
(`HubSpotDailyLimitReached`) — goes straight to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

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
    HubSpotRateLimited,
    HubSpotRetryableError,
)
from smuves_sync.hubspot.clock import Clock
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

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        """`hubspot_max_retries` retries after the first try."""
        return cls(max_attempts=settings.hubspot_max_retries + 1)

    async def run(
        self,
        send: Callable[[], Awaitable[T]],
        *,
        clock: Clock,
        on_rate_limited: Callable[[HubSpotRateLimited], float],
    ) -> T:
        """Call `send` until it succeeds or fails for good.

        `on_rate_limited` is told of each short-window 429 and returns how long this request
        must still sleep itself (the shared budget may already hold every request back).
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
        return await retrying(self._through_rate_limits, send, clock, on_rate_limited)

    async def _through_rate_limits(
        self,
        send: Callable[[], Awaitable[T]],
        clock: Clock,
        on_rate_limited: Callable[[HubSpotRateLimited], float],
    ) -> T:
        waits = 0
        while True:
            try:
                return await send()
            except HubSpotDailyLimitReached:
                raise
            except HubSpotRateLimited as exc:
                waits += 1
                if waits > self.max_rate_limit_waits:
                    raise
                delay = on_rate_limited(exc)
                if delay > 0:
                    await clock.sleep(delay)


def _log_retry(state: RetryCallState) -> None:
    error = state.outcome.exception() if state.outcome else None
    wait = state.next_action.sleep if state.next_action else 0.0
    log.warning(
        "HubSpot request failed (try %d), retrying in %.2fs: %s", state.attempt_number, wait, error
    )
