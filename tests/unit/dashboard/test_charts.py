"""Per-minute charts drawn as SVG on the server."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.dashboard.charts import minute_chart, nice_ceiling

START = datetime(2026, 3, 1, 11, 31, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "ceiling"), [(0, 1), (1, 1), (2, 2), (3, 5), (7, 10), (11, 20), (480, 500)]
)
def test_the_axis_ends_at_a_round_number(value: int, ceiling: int) -> None:
    assert nice_ceiling(value) == ceiling


def test_a_chart_has_a_bar_per_minute_and_says_what_it_shows() -> None:
    points = [(START + timedelta(minutes=i), i % 7) for i in range(60)]
    points[30] = (points[30][0], 40)

    chart = minute_chart(points, chart_id="c", title="Requests per minute", unit="requests")

    svg = str(chart.svg)
    assert svg.count("<rect") == 60
    assert 'role="img"' in svg and 'aria-labelledby="c-title c-desc"' in svg
    assert "<title>12:01 UTC: 40 requests</title>" in svg
    assert chart.summary == (
        f"{sum(v for _, v in points):,} requests in the last 60 minutes; at most 40 in one "
        "minute (12:01 UTC); 3 in the current one."
    )
    assert chart.summary in svg
    labels = re.findall(r'text-anchor="end">([0-9,]+)</text>', svg)
    assert labels == ["0", "25", "50"]


def test_an_empty_hour_is_drawn_flat_with_whole_number_labels() -> None:
    points = [(START + timedelta(minutes=i), 0) for i in range(60)]

    svg = str(minute_chart(points, chart_id="z", title="429s", unit="429 answers").svg)

    assert re.findall(r'text-anchor="end">([0-9,]+)</text>', svg) == ["0", "1"]
    assert 'height="0.0"' in svg


def test_titles_are_escaped() -> None:
    chart = minute_chart([], chart_id="e", title="<b>x</b>", unit="things")
    assert "<b>" not in str(chart.svg) and chart.summary == "No data."
