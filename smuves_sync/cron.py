"""Cron expressions for schedules: validation and the next firing time (croniter does the math).

An expression can parse and still never fire (``0 0 31 2 *``: February has no 31st); croniter
then gives up after searching a span of years. `next_fire_time` reports that as an
`InvalidCronExpression` like any other bad expression, so no caller meets croniter's own errors.

Spread: many schedules with one expression ("0 2 * * *" for every portal) would all fire in the
same second. `spread_offset` gives each portal a stable offset within a window (the same on
every worker: a hash of the portal id, not of the process), and `next_spread_fire_time` is the
first cron time plus that offset that is still ahead.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from croniter import CroniterBadCronError, CroniterError, croniter

from smuves_sync.errors import InvalidCronExpression

# A new schedule must fire within this many years of being added. The rarest expression that
# fires at all, February 29th, fires at most eight years apart (2096 to 2104) and usually every
# four; five years refuses what never fires while accepting every leap-day schedule today.
MUST_FIRE_WITHIN_YEARS = 5
# How far a schedule already stored is searched for its next time (croniter's own default).
SEARCH_YEARS = 50


def validate_cron(expression: str) -> str:
    """Return the expression normalised, or raise InvalidCronExpression with the reason."""
    normalised = " ".join(expression.split())
    if len(normalised.split(" ")) != 5:
        raise InvalidCronExpression(
            f"invalid cron expression {expression!r}: expected 5 fields "
            "(minute hour day-of-month month day-of-week), e.g. '0 3 * * *'"
        )
    try:
        croniter(normalised)
    except (CroniterBadCronError, ValueError, KeyError) as exc:
        raise InvalidCronExpression(f"invalid cron expression {expression!r}: {exc}") from None
    return normalised


def next_fire_time(
    expression: str, after: datetime, *, within_years: int | None = None
) -> datetime:
    """The first time strictly after `after` (timezone-aware, UTC) at which `expression` fires.

    `InvalidCronExpression` when it does not fire within `within_years` years of `after`
    (None: `SEARCH_YEARS`), e.g. for a date no month has.
    """
    normalised = validate_cron(expression)
    years = within_years if within_years is not None else SEARCH_YEARS
    search = croniter(normalised, after, max_years_between_matches=years)
    try:
        fire: datetime = search.get_next(datetime)
    except (CroniterError, ValueError, OverflowError) as exc:
        raise InvalidCronExpression(
            f"invalid cron expression {expression!r}: it never fires "
            f"(no matching time within {years} years of {after:%Y-%m-%d})"
        ) from exc
    return fire


def spread_offset(portal_id: int, window_seconds: float) -> timedelta:
    """The portal's stable offset within `window_seconds` (0: none), to the whole second."""
    if window_seconds <= 0:
        return timedelta(0)
    digest = hashlib.blake2b(str(portal_id).encode(), digest_size=8).digest()
    return timedelta(seconds=int.from_bytes(digest) % max(int(window_seconds), 1))


def next_spread_fire_time(
    expression: str, after: datetime, offset: timedelta, *, within_years: int | None = None
) -> datetime:
    """The first cron time of `expression` that, `offset` later, is strictly after `after`;
    that later time. A schedule fired at its offset time comes back at its next cron time."""
    return next_fire_time(expression, after - offset, within_years=within_years) + offset
