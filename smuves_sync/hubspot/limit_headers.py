"""What HubSpot's answers say about its rate limits: the `X-HubSpot-RateLimit-*` headers,
`Retry-After`, and when a spent daily limit comes back.

`LimitHeaders.of(headers)` reads the rolling window (`Max`, `Remaining`,
`Interval-Milliseconds`), the per-second limit and what is left of the day's; a header that
is missing or not a number reads as None. `parse_retry_after` takes delta seconds or an HTTP
date. HubSpot resets the daily limit at midnight in the portal's time zone (`next_midnight`);
a DAILY `Retry-After` further away than `MAX_DAILY_RESET_SECONDS` is refused as malformed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from email.utils import parsedate_to_datetime

log = logging.getLogger(__name__)

HEADER_MAX = "X-HubSpot-RateLimit-Max"
HEADER_REMAINING = "X-HubSpot-RateLimit-Remaining"
HEADER_INTERVAL_MS = "X-HubSpot-RateLimit-Interval-Milliseconds"
HEADER_SECONDLY = "X-HubSpot-RateLimit-Secondly"
HEADER_SECONDLY_REMAINING = "X-HubSpot-RateLimit-Secondly-Remaining"
HEADER_DAILY = "X-HubSpot-RateLimit-Daily"
HEADER_DAILY_REMAINING = "X-HubSpot-RateLimit-Daily-Remaining"

# The daily limit resets at the next midnight of the portal's time zone: at most 24 hours
# away (25 on a DST day). Twice that still covers a time zone we guessed wrong by a whole day
# (UTC-12 against UTC+14) and refuses the days, months or years a broken header may claim.
MAX_DAILY_RESET_SECONDS = 48 * 3600


@dataclass(frozen=True, slots=True)
class LimitHeaders:
    """The rate-limit headers of one answer; None where a header is missing or unreadable."""

    interval_seconds: float | None
    limit: int | None
    remaining: int | None
    secondly: int | None
    secondly_remaining: int | None
    daily_remaining: int | None

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> LimitHeaders:
        """Read the `X-HubSpot-RateLimit-*` headers of an answer."""
        interval_ms = _int_header(headers, HEADER_INTERVAL_MS)
        return cls(
            interval_seconds=interval_ms / 1000 if interval_ms else None,
            limit=_int_header(headers, HEADER_MAX),
            remaining=_int_header(headers, HEADER_REMAINING),
            secondly=_int_header(headers, HEADER_SECONDLY),
            secondly_remaining=_int_header(headers, HEADER_SECONDLY_REMAINING),
            daily_remaining=_int_header(headers, HEADER_DAILY_REMAINING),
        )


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
