"""Small per-minute bar charts, drawn on the server as inline SVG (no chart library).

    chart = minute_chart(points, chart_id="done", title="Jobs completed per minute",
                         unit="jobs")
    chart.svg, chart.summary          # the drawing; the same in words

A chart is an image to screen readers (role="img") whose title and description say what it
shows in words (`summary`: the total, the busiest minute and the current one); the page
prints the summary under the title too. Each bar carries its own
<title> (a tooltip: minute and value). Colours come from the page's CSS (`currentColor`), and
nothing depends on telling colours apart: one series per chart, values on the axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from markupsafe import Markup, escape

# Drawn small so that its text stays legible when a third of a 1280 px page shows it.
_WIDTH = 400
_HEIGHT = 130
_LEFT = 44
_RIGHT = 4
_TOP = 8
_BOTTOM = 22


@dataclass(frozen=True, slots=True)
class MinuteChart:
    """A chart's title, what it shows in words, and the drawing."""

    title: str
    summary: str
    svg: Markup


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that is >= `value` (1 for 0)."""
    if value <= 1:
        return 1
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def _clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M")


def minute_chart(
    points: Sequence[tuple[datetime, int]], *, chart_id: str, title: str, unit: str
) -> MinuteChart:
    """A bar chart of one value per minute, oldest minute first."""
    values = [value for _, value in points]
    top = nice_ceiling(max(values, default=0))
    plot_width = _WIDTH - _LEFT - _RIGHT
    plot_height = _HEIGHT - _TOP - _BOTTOM
    slot = plot_width / max(len(points), 1)
    total = sum(values)
    if points:
        busiest = max(points, key=lambda p: p[1])
        summary = (
            f"{total:,} {unit} in the last {len(points)} minutes; at most {busiest[1]:,} in "
            f"one minute ({_clock(busiest[0])} UTC); {points[-1][1]:,} in the current one."
        )
    else:
        summary = "No data."
    parts = [
        f'<svg class="chart" id="{chart_id}" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" '
        f'aria-labelledby="{chart_id}-title {chart_id}-desc" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<desc id="{chart_id}-desc">{escape(summary)}</desc>',
    ]
    for step in (0, 1, 2):
        y = _TOP + plot_height * (1 - step / 2)
        parts.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        if top * step % 2 == 0:  # whole numbers only: a top of 1 has no middle label
            parts.append(
                f'<text class="axis" x="{_LEFT - 5}" y="{y + 4:.1f}" text-anchor="end">'
                f"{top * step // 2:,}</text>"
            )
    for index, (minute, value) in enumerate(points):
        height = plot_height * value / top
        x = _LEFT + index * slot
        y = _TOP + plot_height - height
        parts.append(
            f'<rect class="bar" x="{x + 0.5:.1f}" y="{y:.1f}" width="{max(slot - 1, 0.5):.1f}" '
            f'height="{height:.1f}"><title>{_clock(minute)} UTC: {value:,} {escape(unit)}'
            "</title></rect>"
        )
    if points:
        baseline = _HEIGHT - 6
        parts.append(
            f'<text class="axis" x="{_LEFT}" y="{baseline}">{_clock(points[0][0])}</text>'
            f'<text class="axis" x="{_WIDTH - _RIGHT}" y="{baseline}" text-anchor="end">'
            f"{_clock(points[-1][0])} UTC</text>"
        )
    parts.append("</svg>")
    return MinuteChart(title, summary, Markup("".join(parts)))
