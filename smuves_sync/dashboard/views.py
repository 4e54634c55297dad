"""Rendering: the Jinja environment, its filters, and the words the pages show.

    html = render("overview.html", request_context, counts=…)

Templates live in ``dashboard/templates`` and are autoescaped; filters turn numbers, times
and durations into short text (``number``, ``when``, ``ago``, ``duration``), `progress`
describes a bar, and `advice` tells the operator what to do about a failed job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import jinja2

from smuves_sync.models import Job, JobStatus, RunStatus

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("smuves_sync.dashboard", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render(template: str, **values: Any) -> str:
    """The template rendered with `values`."""
    return _ENV.get_template(template).render(**values)


def number(value: int | None) -> str:
    """1234567 -> '1,234,567'; None -> '?'."""
    return "?" if value is None else f"{value:,}"


def when(moment: datetime | None) -> str:
    """A moment in UTC, to the second: '2026-03-01 14:05:09 UTC'; None -> '—'."""
    if moment is None:
        return "—"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(span: timedelta | None) -> str:
    """A span in its two largest units: '3 d 4 h', '2 min 5 s', '0.4 s'; None -> '—'."""
    if span is None:
        return "—"
    seconds = span.total_seconds()
    if seconds < 0:
        return "-" + duration(-span)
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if whole >= size:
            parts.append(f"{whole // size} {unit}")
            whole %= size
    return " ".join(parts[:2])


def ago(moment: datetime | None, now: datetime | None = None) -> str:
    """'5 min ago' / 'in 3 h'; None -> 'never'."""
    if moment is None:
        return "never"
    now = now or datetime.now(UTC)
    span = now - moment
    if span >= timedelta(0):
        return f"{duration(span)} ago"
    return f"in {duration(-span)}"


@dataclass(frozen=True, slots=True)
class Bar:
    """What a progress bar shows: `value` of `maximum`, and the same in words."""

    value: int
    maximum: int
    percent: int | None
    label: str


def progress(processed: int, total: int | None, status: JobStatus | RunStatus | None = None) -> Bar:
    """The bar of `processed` of `total` (None: not counted yet)."""
    done = status in (JobStatus.COMPLETED, RunStatus.COMPLETED)
    if total is None:
        return Bar(0, 1, None, f"{number(processed)} of ? (not counted yet)")
    if total == 0:
        # Nothing to fetch: a finished job is all done, an unfinished one has not started.
        return Bar(1 if done else 0, 1, 100 if done else 0, "0 of 0")
    if done:
        # A finished fetch may have seen fewer objects than it counted (some were deleted
        # in between): it is still all done.
        return Bar(total, total, 100, f"{number(processed)} of {number(total)}")
    percent = min(100, processed * 100 // total)
    shown = min(processed, total)
    return Bar(shown, total, percent, f"{number(processed)} of {number(total)}")


_STATUS_MARKS = {
    "pending": "○",
    "running": "▶",
    "completed": "✓",
    "failed": "✗",
    "partially_failed": "◐",
    "stopped": "■",
}


def status_word(status: str) -> str:
    """'partially_failed' -> 'partially failed' (the text the pages show for a status)."""
    return status.replace("_", " ")


def status_mark(status: str) -> str:
    """A symbol beside the word, so a status reads without colour at a glance."""
    return _STATUS_MARKS.get(status, "•")


_ADVICE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\(401\)|refused the token|revoked"),
        "Store a new private app token for the portal (`smuves portal add <id> --name NAME "
        "--token-stdin`), then Retry.",
    ),
    (
        re.compile(r"\(403\)|scope|not available for portal"),
        "Grant the scope to the portal's private app (or leave this type out of its fetches), "
        "then Retry. Retrying before that fails the same way.",
    ),
    (
        re.compile(r"heartbeats|lease expired"),
        "The workers running it died or stalled each time: check the workers' logs and their "
        "memory, then Retry (it resumes from its last saved page).",
    ),
    (
        re.compile(r"\b429\b|rate limit|DAILY", re.IGNORECASE),
        "HubSpot's rate limit: Retry later, or spread the portal's schedules apart.",
    ),
    (
        re.compile(r"\b5\d\d\b|timed out|timeout|connect", re.IGNORECASE),
        "HubSpot or the network failed repeatedly: Retry once HubSpot answers again "
        "(it resumes from its last saved page).",
    ),
    (
        re.compile(r"malformed|not JSON|cursor", re.IGNORECASE),
        "HubSpot sent pages in a shape the fetch cannot read: Retry; if it fails again, "
        "Requeue from start, and report the error if that fails too.",
    ),
)


def advice(job: Job) -> str:
    """What an operator should do about a failed (or stopped) job."""
    if job.status is JobStatus.STOPPED:
        return "Stopped on purpose: Retry resumes it from its last saved page."
    text = job.last_error or ""
    for pattern, words in _ADVICE:
        if pattern.search(text):
            return words
    return (
        f"Failed after {job.attempts} of {job.max_attempts} attempts: read the error, then "
        "Retry (resumes from its last saved page) or Requeue from start."
    )


_ENV.filters.update(number=number, when=when, duration=duration, ago=ago)
_ENV.globals.update(
    progress=progress, status_word=status_word, status_mark=status_mark, advice=advice
)
