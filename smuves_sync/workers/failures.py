"""What a failed job records and whether it may try again.

A handler raises; the runner asks `outcome_for` what to do with the error:

- ``HubSpotDailyLimitReached`` parks the job until the budget resets (no attempt spent);
- a token under a key this worker does not have (``TokenKeyMissing``: a key rotation whose
  processes do not all run with ``NEW,OLD``) parks the job for `KEY_MISSING_WAIT`, no attempt
  spent, saying which setting to fix: another worker, or this one restarted, can read it;
- a token HubSpot refuses (401), or a portal already marked so, fails the job's whole run at
  once and marks the portal (`FailRun`): every other job would only be refused too;
- HubSpot unreachable for longer than the outage bound (``HubSpotUnreachable``: the job
  waited it out in the HubSpot client, no attempt spent) fails the job at once, saying for
  how long and what to check, not the exception;
- permanent errors fail the job at once, with a message that tells a person what to do
  (403: grant the scope or leave the type out; an answer past
  the body limit names the setting that raises it; a listing that never ends says so, and
  the next fetch starts over from a fresh count);
- everything else is retried with backoff while attempts remain. A page HubSpot sent in the
  wrong shape is retried too: a cut-off answer is usually transient, and the job resumes
  from its last checkpoint, not from the first page. So is any `DatabaseError` (the
  database's trouble, not the job's: a lost connection, a refused or failed statement).

Every failure is told two ways. `Fail.message` is the operators' (``jobs.last_error``, the
logs, `smuves run`): the error as it was raised, with whatever host, port, statement or file
path it names. `Fail.public` is the portal's users' (``jobs.last_error_public``, the API, the
notifications): a category and what to do about it, with HubSpot's correlation id when there
is one, and never a word of the error's own text unless it is ours and about HubSpot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from smuves_sync.errors import (
    ConfigurationError,
    ContentTypeUnavailable,
    DatabaseError,
    HubSpotAuthError,
    HubSpotBadRequest,
    HubSpotDailyLimitReached,
    HubSpotError,
    HubSpotNotFound,
    HubSpotRateLimited,
    HubSpotRetryableError,
    HubSpotUnreachable,
    MalformedResponse,
    PortalNeedsReconnect,
    ResponseTooLarge,
    RunawayListing,
    SmuvesError,
    TokenKeyMissing,
)
from smuves_sync.hubspot.outage import duration_words
from smuves_sync.models import ContentType, Job
from smuves_sync.queue import error_text

# How long a job whose token this worker cannot decrypt waits before it is tried again: long
# enough not to spin through the queue, short enough that a fixed setting soon shows.
KEY_MISSING_WAIT = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class Park:
    """Wait until `until` (or for `until` from the database's now) without spending an
    attempt (`reason` is told to everyone)."""

    until: datetime | timedelta
    reason: str


@dataclass(frozen=True, slots=True)
class FailRun:
    """Fail the job and every other open job of its run now, and mark the portal's token
    refused: `message` for the operators, `public` for the users."""

    message: str
    public: str


@dataclass(frozen=True, slots=True)
class Fail:
    """Record `message` (operators) and `public` (users); retry later when `retryable` and
    attempts remain."""

    message: str
    retryable: bool
    public: str = field(default="failed; the operators have the details")


def _correlation(error: BaseException) -> str:
    correlation_id = error.correlation_id if isinstance(error, HubSpotError) else None
    return f" (HubSpot correlationId {correlation_id})" if correlation_id else ""


def _status(error: HubSpotError) -> str:
    return f" (HTTP {error.status})" if error.status is not None else ""


def _again(job: Job) -> str:
    """Whether a retryable failure of `job` (claimed for its `attempts`-th try) is tried
    again: the queue retries it while attempts remain (fail_job)."""
    if job.attempts < job.max_attempts:
        return f"it is tried again (attempt {job.attempts} of {job.max_attempts} failed)"
    tries = "attempt" if job.max_attempts == 1 else f"{job.max_attempts} attempts"
    return f"it was given up after {tries}"


def unreachable_note(job: Job, error: HubSpotUnreachable, *, operator: bool) -> str:
    """What a job that waited out HubSpot being unreachable says when it fails: for how long,
    how, what to check, and how to fetch again (`operator`: the command; else the fetch)."""
    lasted = f"HubSpot was unreachable for {duration_words(error.lasted)} ({error.cause})"
    check = "check HubSpot's status page (status.hubspot.com) or the network"
    if operator:
        return f"{lasted} — {check}; run `smuves sync {job.portal_id}` again"
    return f"{lasted}: {check}, then start the fetch again"


def public_message(job: Job, error: BaseException) -> str:
    """What the portal's users are told of `error`: a category, what to do, and HubSpot's
    correlation id; nothing of the error's own text that could name our hosts or files."""
    what = str(job.kind)
    again = _again(job)
    if isinstance(error, HubSpotUnreachable):
        return unreachable_note(job, error, operator=False)
    match error:
        case HubSpotAuthError() | PortalNeedsReconnect():
            advice = (
                "HubSpot refused the portal's token (401): it was revoked, has expired or is "
                "wrong. Reconnect the portal with a new private app token and start the fetch "
                "again"
            )
        case ContentTypeUnavailable():
            scope = ContentType(job.content_type).spec.scope
            advice = (
                f"{job.content_type} is not available for this portal (403): the private app "
                f"lacks the '{scope}' scope, or the portal's HubSpot subscription does not "
                "include it. Grant the scope, or fetch without this type"
            )
        case HubSpotRateLimited():
            advice = f"HubSpot's rate limit held the {what} back for too long; {again}"
        case MalformedResponse():
            resume = ", from the last page" if job.attempts < job.max_attempts else ""
            advice = f"HubSpot sent an answer of the wrong shape; {again}{resume}"
        case ResponseTooLarge():
            advice = (
                "HubSpot sent an answer larger than this service reads; its operators can "
                "raise the limit"
            )
        case RunawayListing():
            advice = (
                f"HubSpot's listing of {job.content_type} did not end (far more objects than "
                "HubSpot counted); the next fetch counts afresh and starts over"
            )
        case HubSpotRetryableError():
            advice = f"HubSpot could not be reached or failed{_status(error)}; {again}"
        case HubSpotNotFound():
            advice = "HubSpot answered that what was asked for does not exist (HTTP 404)"
        case HubSpotBadRequest():
            advice = "HubSpot refused the request as invalid (HTTP 400)"
        case HubSpotError():
            advice = f"HubSpot answered with an error{_status(error)}"
        case ConfigurationError():
            advice = (
                "the portal's HubSpot token is missing or cannot be read here: reconnect the "
                "portal; if that does not help, the operators have the details"
            )
        case _:
            # The database's trouble is retried as the unforeseen is (`outcome_for`).
            ours = isinstance(error, SmuvesError) and not isinstance(error, DatabaseError)
            retried = "" if ours and not getattr(error, "retryable", True) else f"; {again}"
            advice = f"the {what} failed inside this service; the operators have the details"
            advice += retried
    return f"{type(error).__name__}: {advice}{_correlation(error)}"


def outcome_for(job: Job, error: BaseException) -> Park | Fail | FailRun:
    """How the queue should record `error`, raised while working `job`."""
    if isinstance(error, HubSpotDailyLimitReached):
        return Park(error.resets_at, f"parked: {error}")
    if isinstance(error, TokenKeyMissing):
        minutes = int(KEY_MISSING_WAIT.total_seconds() // 60)
        return Park(
            KEY_MISSING_WAIT,
            f"parked for {minutes} minutes: the portal's token was encrypted with a key this "
            "worker does not have: run every process with SMUVES_SECRET_KEY=NEW,OLD (the "
            "newest key first, the one the token was stored with behind it)",
        )
    public = public_message(job, error)
    if isinstance(error, HubSpotUnreachable):
        return Fail(unreachable_note(job, error, operator=True), retryable=False, public=public)
    if isinstance(error, HubSpotAuthError):
        return FailRun(
            f"HubSpot refused the token of portal {job.portal_id} (401): it was revoked, has "
            f"expired or is wrong; reconnect the portal: store a new private app token with "
            f"`smuves portal add {job.portal_id} --name NAME --token-stdin` and start the "
            f"fetch again. Nothing more of this run is sent to HubSpot. Details: {error}",
            public=public,
        )
    if isinstance(error, PortalNeedsReconnect):
        return FailRun(str(error), public=public)
    if isinstance(error, ContentTypeUnavailable):
        # The private-app scope the type needs: part of its spec (content_types).
        scope = ContentType(job.content_type).spec.scope
        return Fail(
            f"{job.content_type} is not available for portal {job.portal_id} (403): the "
            f"private app lacks the '{scope}' scope, or the portal's HubSpot subscription does "
            f"not include it. Grant the scope, or fetch without this type (--types). "
            f"Details: {error}",
            retryable=False,
            public=public,
        )
    if isinstance(error, MalformedResponse):
        return Fail(error_text(error), retryable=True, public=public)
    # The database's trouble (whatever the driver raised, translated) is not the job's own
    # failure: it goes with the unforeseen ones below.
    if isinstance(error, SmuvesError) and not isinstance(error, DatabaseError):
        return Fail(error_text(error), retryable=error.retryable, public=public)
    # An error nobody foresaw (a bug, a lost database connection): worth another attempt,
    # and the attempts bound how often it repeats.
    what = str(job.kind)
    return Fail(
        f"unexpected error during the {what}: {error_text(error)}", retryable=True, public=public
    )
