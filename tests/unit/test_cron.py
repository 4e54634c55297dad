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
