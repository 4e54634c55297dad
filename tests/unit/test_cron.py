from datetime import UTC, datetime

import pytest

from smuves_sync.cron import next_fire_time, validate_cron
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
