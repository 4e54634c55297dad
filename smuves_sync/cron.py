"""Cron expressions for schedules: validation and the next firing time (croniter does the math)."""

from __future__ import annotations

from datetime import datetime

from croniter import CroniterBadCronError, croniter

from smuves_sync.errors import InvalidCronExpression


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


def next_fire_time(expression: str, after: datetime) -> datetime:
    """The first time strictly after `after` (timezone-aware, UTC) at which `expression` fires."""
    fire: datetime = croniter(validate_cron(expression), after).get_next(datetime)
    return fire
