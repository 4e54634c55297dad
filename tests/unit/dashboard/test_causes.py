"""A run's errors grouped by cause: the users' note, else the error as raised."""

from __future__ import annotations

from smuves_sync.dashboard.causes import causes_of
from smuves_sync.models import ContentType, JobStatus
from tests.support.factories import job_record

NOTE = "HubSpotRetryableError: HubSpot could not be reached or failed"


def test_jobs_with_one_note_share_a_cause_and_keep_each_error_as_raised_once() -> None:
    noted = {"last_error_public": NOTE}
    jobs = [
        job_record(id=1, last_error="KeyError: 'x'"),
        job_record(id=2, content_type=ContentType.BLOG_POST, last_error="GET /a", **noted),
        job_record(id=3, content_type=ContentType.HUBDB_ROW, last_error="GET /b", **noted),
        job_record(id=4, content_type=ContentType.HUBDB_TABLE, last_error="GET /a", **noted),
        job_record(id=5, status=JobStatus.COMPLETED),
    ]

    first, second = causes_of(jobs)

    assert first.text == NOTE and [j.id for j in first.jobs] == [2, 3, 4]
    assert first.types == [ContentType.BLOG_POST, ContentType.HUBDB_ROW, ContentType.HUBDB_TABLE]
    assert first.raised == [
        ("GET /a", [ContentType.BLOG_POST, ContentType.HUBDB_TABLE]),
        ("GET /b", [ContentType.HUBDB_ROW]),
    ]
    # Without a note the error as raised is the cause, and says nothing more than itself.
    assert second.text == "KeyError: 'x'" and second.raised == []


def test_causes_as_common_as_each_other_stay_in_the_order_of_their_first_job() -> None:
    jobs = [job_record(id=i, last_error=f"error {i % 2}") for i in range(1, 5)]

    assert [c.text for c in causes_of(jobs)] == ["error 1", "error 0"]
    assert causes_of([job_record(id=1)]) == []
