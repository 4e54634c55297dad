"""What a failed job records: parks, permanent failures with advice, retries."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotDailyLimitReached,
    HubSpotNotFound,
    HubSpotRetryableError,
    HubSpotUnreachable,
    MalformedResponse,
    PortalNeedsReconnect,
    ResponseTooLarge,
    RunawayListing,
    TokenKeyMissing,
)
from smuves_sync.models import ContentType, Job, JobKind, JobStatus
from smuves_sync.workers.failures import KEY_MISSING_WAIT, Fail, FailRun, Park, outcome_for
from tests.support.factories import job_record

NOW = datetime(2031, 1, 1, tzinfo=UTC)


def job(content_type: ContentType = ContentType.HUBDB_ROW, kind: JobKind = JobKind.FETCH) -> Job:
    return job_record(
        run_id=2, portal_id=123, kind=kind, content_type=content_type, status=JobStatus.RUNNING,
        attempts=1, run_after=NOW, locked_at=NOW, locked_by="w", heartbeat_at=NOW,
        created_at=NOW,
    )  # fmt: skip


def test_a_spent_daily_budget_parks_until_the_reset() -> None:
    resets = datetime(2031, 1, 2, tzinfo=UTC)
    error = HubSpotDailyLimitReached("spent", resets_at=resets, portal_id=123)
    assert outcome_for(job(), error) == Park(resets, f"parked: {error}")


def test_a_refused_token_fails_the_whole_run_and_says_how_to_reconnect() -> None:
    outcome = outcome_for(job(), HubSpotAuthError("refused", portal_id=123, status=401))
    assert isinstance(outcome, FailRun)
    assert "reconnect the portal" in outcome.message
    assert "smuves portal add 123 --name NAME --token-stdin" in outcome.message
    # A portal already marked so: the same, without a request.
    marked = outcome_for(job(), PortalNeedsReconnect(123))
    assert isinstance(marked, FailRun) and "Reconnect the portal" in marked.public


def test_a_token_under_a_key_this_worker_lacks_parks_for_a_while() -> None:
    outcome = outcome_for(job(), TokenKeyMissing("cannot be decrypted"))
    assert isinstance(outcome, Park) and outcome.until == KEY_MISSING_WAIT
    assert "SMUVES_SECRET_KEY=NEW,OLD" in outcome.reason


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


# Errors as they come out of the machinery: they name hosts, ports, statements and paths.
_LEAKY = [
    OSError(13, "Permission denied", "/srv/smuves/exports/portal-123/site_page-run7.csv"),
    ConnectionRefusedError(
        'connection to server at "db-primary.internal" (10.0.4.17), port 5432 failed'
    ),
    RuntimeError('duplicate key value violates "jobs_pkey": INSERT INTO public.jobs (id) ...'),
    HubSpotRetryableError(
        "could not complete GET /cms/v3/pages: ConnectError [Errno 111] 10.0.4.17:3128",
        status=None,
        portal_id=123,
    ),
    MalformedResponse("GET /cms/v3/pages: 'results' missing; proxy at 10.0.4.17:3128 said hi"),
]
_SECRETS_OF_THE_MACHINE = ["/srv", "10.0.4.17", "5432", "3128", "db-primary", "INSERT", "jobs_pkey"]


@pytest.mark.parametrize("error", _LEAKY, ids=lambda e: type(e).__name__)
def test_what_users_are_told_names_no_host_port_statement_or_path(error: Exception) -> None:
    outcome = outcome_for(job(kind=JobKind.EXPORT), error)
    assert isinstance(outcome, Fail)
    assert [s for s in _SECRETS_OF_THE_MACHINE if s in outcome.public] == []
    assert outcome.public.startswith(f"{type(error).__name__}: ")
    # The operators keep the whole story.
    assert any(s in outcome.message for s in _SECRETS_OF_THE_MACHINE)


def test_users_get_advice_and_hubspots_correlation_id() -> None:
    refused = HubSpotAuthError(
        "GET /cms/v3/pages -> 401", portal_id=123, status=401, correlation_id="c0ffee-42"
    )
    outcome = outcome_for(job(), refused)
    assert isinstance(outcome, FailRun)
    assert "Reconnect the portal" in outcome.public
    assert outcome.public.endswith("(HubSpot correlationId c0ffee-42)")
    scope = outcome_for(job(), ContentTypeUnavailable("no", status=403, correlation_id="x1"))
    assert isinstance(scope, Fail) and "lacks the 'hubdb' scope" in scope.public


def test_hubspot_unreachable_past_the_bound_fails_at_once_saying_what_to_do() -> None:
    error = HubSpotUnreachable(
        "HubSpot was unreachable for 1 h (connection refused)",
        lasted=3600.0,
        cause="connection refused",
        portal_id=123,
        content_type="site_page",
    )
    outcome = outcome_for(job(ContentType.SITE_PAGE), error)
    assert outcome == Fail(
        "HubSpot was unreachable for 1 h (connection refused) — check HubSpot's status page "
        "(status.hubspot.com) or the network; run `smuves sync 123` again",
        retryable=False,
        public="HubSpot was unreachable for 1 h (connection refused): check HubSpot's status "
        "page (status.hubspot.com) or the network, then start the fetch again",
    )


@pytest.mark.parametrize(
    ("attempts", "told"),
    [(1, "it is tried again (attempt 1 of 3 failed)"), (3, "it was given up after 3 attempts")],
)
def test_a_transient_failure_says_whether_it_is_tried_again(attempts: int, told: str) -> None:
    claimed = replace(job(), attempts=attempts, max_attempts=3)
    outcome = outcome_for(claimed, HubSpotRetryableError("HTTP 500", status=500))
    assert isinstance(outcome, Fail) and outcome.retryable
    assert outcome.public.endswith(told)
    assert "while attempts remain" not in outcome.public
