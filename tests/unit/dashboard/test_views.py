"""The words and bars the pages show."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.dashboard.views import advice, ago, duration, progress, status_word
from smuves_sync.models import JobStatus
from tests.support.factories import job_record

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
JOB = job_record(
    status=JobStatus.FAILED, attempts=3, run_after=NOW, created_at=NOW, finished_at=NOW
)


@pytest.mark.parametrize(
    ("processed", "total", "status", "value", "maximum", "percent", "label"),
    [
        (300, 1200, JobStatus.RUNNING, 300, 1200, 25, "300 of 1,200"),
        (5, None, JobStatus.RUNNING, 0, 1, None, "5 of ? (not counted yet)"),
        (0, 0, JobStatus.PENDING, 0, 1, 0, "0 of 0"),
        (0, 0, JobStatus.COMPLETED, 1, 1, 100, "0 of 0"),
        # Objects deleted while the fetch ran: it saw fewer than it counted, and is done.
        (990, 1000, JobStatus.COMPLETED, 1000, 1000, 100, "990 of 1,000"),
        (1200, 1000, JobStatus.RUNNING, 1000, 1000, 100, "1,200 of 1,000"),
    ],
)
def test_a_bar_shows_processed_of_total(
    processed: int,
    total: int | None,
    status: JobStatus,
    value: int,
    maximum: int,
    percent: int | None,
    label: str,
) -> None:
    bar = progress(processed, total, status)
    assert (bar.value, bar.maximum, bar.percent, bar.label) == (value, maximum, percent, label)


def test_durations_and_moments_read_as_words() -> None:
    assert duration(None) == "—"
    assert duration(timedelta(seconds=0.42)) == "0.4 s"
    assert duration(timedelta(seconds=125)) == "2 min 5 s"
    assert duration(timedelta(days=3, hours=4, minutes=5)) == "3 d 4 h"
    assert ago(NOW - timedelta(minutes=5), NOW) == "5 min ago"
    assert ago(NOW + timedelta(hours=3), NOW) == "in 3 h"
    assert ago(None, NOW) == "never"
    assert status_word("partially_failed") == "partially failed"


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("HubSpot refused the token of portal 1 (401): it was revoked", "new private app token"),
        ("blog_post is not available for portal 1 (403): the private app lacks", "Grant the scope"),
        ("gave up after 3 attempts: the worker ... stopped sending heartbeats", "workers' logs"),
        ("HubSpot 503 Service Unavailable", "HubSpot or the network"),
        ("malformed response: not JSON", "Requeue from start"),
        ("something nobody foresaw", "Failed after 3 of 3 attempts"),
    ],
)
def test_a_failed_job_gets_advice(error: str, words: str) -> None:
    assert words in advice(replace(JOB, last_error=error))


def test_a_stopped_job_was_stopped_on_purpose() -> None:
    assert "Stopped on purpose" in advice(replace(JOB, status=JobStatus.STOPPED))
