from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.cron import next_fire_time, next_spread_fire_time, spread_offset, validate_cron
from smuves_sync.errors import InvalidCronExpression


def test_next_fire_time_is_strictly_after() -> None:
    start = datetime(2026, 11, 30, 3, 0, tzinfo=UTC)
    assert next_fire_time("0 3 * * *", start) == datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    assert next_fire_time("  */15   * * * *", start) == datetime(2026, 11, 30, 3, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    "expression", ["", "0 3 * *", "61 3 * * *", "0 3 * * * *", "every day", "0 25 * * *"]
)
def test_invalid_expressions_are_refused(expression: str) -> None:
    with pytest.raises(InvalidCronExpression, match="invalid cron expression"):
        validate_cron(expression)


@pytest.mark.parametrize("expression", ["0 0 31 2 *", "0 0 30 2 *", "* * 31 4,6,9,11 *"])
def test_an_expression_that_never_fires_is_invalid_not_a_croniter_error(expression: str) -> None:
    # croniter builds these; only the search for a next time finds that none exists.
    assert validate_cron(expression) == expression
    start = datetime(2031, 1, 1, tzinfo=UTC)
    with pytest.raises(InvalidCronExpression, match="it never fires") as caught:
        next_fire_time(expression, start)
    assert "\n" not in str(caught.value)
    with pytest.raises(InvalidCronExpression, match="within 5 years of 2031-01-01"):
        next_fire_time(expression, start, within_years=5)


def test_a_leap_day_fires_within_five_years_even_across_a_skipped_leap_year() -> None:
    start = datetime(2031, 1, 1, tzinfo=UTC)
    assert next_fire_time("0 0 29 2 *", start, within_years=5) == datetime(2032, 2, 29, tzinfo=UTC)
    # 2100 is no leap year: eight years between 2096 and 2104, found with the default horizon.
    after_2096 = datetime(2096, 3, 1, tzinfo=UTC)
    assert next_fire_time("0 0 29 2 *", after_2096) == datetime(2104, 2, 29, tzinfo=UTC)


def test_a_portals_spread_offset_is_stable_and_within_the_window() -> None:
    offsets = [spread_offset(portal, 600) for portal in range(1, 501)]
    assert all(timedelta(0) <= o < timedelta(seconds=600) for o in offsets)
    assert offsets == [spread_offset(portal, 600) for portal in range(1, 501)]
    assert len(set(offsets)) > 300  # spread over the window, not bunched
    assert spread_offset(12345, 600) == timedelta(seconds=spread_offset(12345, 600).seconds)
    assert spread_offset(12345, 0) == timedelta(0)


def test_the_next_spread_time_is_the_next_cron_time_plus_the_offset() -> None:
    offset = timedelta(minutes=4)
    night = datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
    assert next_spread_fire_time("0 3 * * *", night - timedelta(hours=1), offset) == night + offset
    # between the cron time and its offset time: still tonight's firing
    assert next_spread_fire_time("0 3 * * *", night + timedelta(minutes=2), offset) == (
        night + offset
    )
    # fired at its offset time: tomorrow's
    assert next_spread_fire_time("0 3 * * *", night + offset, offset) == (
        night + timedelta(days=1) + offset
    )
