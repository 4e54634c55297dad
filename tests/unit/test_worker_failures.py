"""What a failed job records: parks, permanent failures with advice, retries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotDailyLimitReached,
    HubSpotNotFound,
    HubSpotRetryableError,
    MalformedResponse,
    ResponseTooLarge,
    RunawayListing,
)
from smuves_sync.models import ContentType, Job, JobKind, JobStatus
from smuves_sync.workers.failures import Fail, Park, outcome_for

NOW = datetime(2031, 1, 1, tzinfo=UTC)


def job(content_type: ContentType = ContentType.HUBDB_ROW, kind: JobKind = JobKind.FETCH) -> Job:
    return Job(
        id=1, run_id=2, portal_id=123, kind=kind, content_type=content_type,
        status=JobStatus.RUNNING, attempts=1, max_attempts=3, run_after=NOW, locked_at=NOW,
        locked_by="w", lease_token=None, heartbeat_at=NOW, total=None, processed=0,
        cursor=None, last_error=None, created_at=NOW, finished_at=None,
    )  # fmt: skip


def test_a_spent_daily_budget_parks_until_the_reset() -> None:
    resets = datetime(2031, 1, 2, tzinfo=UTC)
    error = HubSpotDailyLimitReached("spent", resets_at=resets, portal_id=123)
    assert outcome_for(job(), error) == Park(resets, f"parked: {error}")


def test_a_refused_token_fails_for_good_and_says_how_to_reconnect() -> None:
    outcome = outcome_for(job(), HubSpotAuthError("refused", portal_id=123, status=401))
    assert isinstance(outcome, Fail) and not outcome.retryable
    assert "smuves portal add 123 --name NAME --token-stdin" in outcome.message


def test_a_forbidden_type_names_the_scope_it_needs() -> None:
    outcome = outcome_for(job(), ContentTypeUnavailable("no", portal_id=123, status=403))
    assert isinstance(outcome, Fail) and not outcome.retryable
    assert "lacks the 'hubdb' scope" in outcome.message
    assert "--types" in outcome.message


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (HubSpotRetryableError("503", status=503), True),
        (MalformedResponse("cut off"), True),
        (HubSpotNotFound("gone", status=404), False),
        (ResponseTooLarge("past the limit", status=200), False),
        (RunawayListing("does not end"), False),
        (OSError("disk full"), True),
    ],
)
def test_other_errors_keep_their_retry_flag(error: Exception, retryable: bool) -> None:
    outcome = outcome_for(job(kind=JobKind.EXPORT), error)
    assert isinstance(outcome, Fail)
    assert outcome.retryable is retryable
    assert type(error).__name__ in outcome.message
