"""What a failed job records and whether it may try again.

A handler raises; the runner asks `outcome_for` what to do with the error:

- ``HubSpotDailyLimitReached`` parks the job until the budget resets (no attempt spent);
- permanent errors fail the job at once, with a message that tells a person what to do
  (401: reconnect the portal; 403: grant the scope or leave the type out; an answer past
  the body limit names the setting that raises it; a listing that never ends says so, and
  the next fetch starts over from a fresh count);
- everything else is retried with backoff while attempts remain. A page HubSpot sent in the
  wrong shape is retried too: a cut-off answer is usually transient, and the job resumes
  from its last checkpoint, not from the first page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotDailyLimitReached,
    MalformedResponse,
    SmuvesError,
)
from smuves_sync.models import ContentType, Job, JobKind
from smuves_sync.queue import error_text


@dataclass(frozen=True, slots=True)
class Park:
    """Wait until `until` without spending an attempt."""

    until: datetime
    reason: str


@dataclass(frozen=True, slots=True)
class Fail:
    """Record `message`; retry later when `retryable` and attempts remain."""

    message: str
    retryable: bool


def outcome_for(job: Job, error: BaseException) -> Park | Fail:
    """How the queue should record `error`, raised while working `job`."""
    if isinstance(error, HubSpotDailyLimitReached):
        return Park(error.resets_at, f"parked: {error}")
    if isinstance(error, HubSpotAuthError):
        return Fail(
            f"HubSpot refused the token of portal {job.portal_id} (401): it was revoked, has "
            f"expired or is wrong. Store a new private app token with `smuves portal add "
            f"{job.portal_id} --name NAME --token-stdin` and start the fetch again. "
            f"Details: {error}",
            retryable=False,
        )
    if isinstance(error, ContentTypeUnavailable):
        # The private-app scope the type needs: part of its spec (content_types).
        scope = ContentType(job.content_type).spec.scope
        return Fail(
            f"{job.content_type} is not available for portal {job.portal_id} (403): the "
            f"private app lacks the '{scope}' scope, or the portal's HubSpot subscription does "
            f"not include it. Grant the scope, or fetch without this type (--types). "
            f"Details: {error}",
            retryable=False,
        )
    if isinstance(error, MalformedResponse):
        return Fail(error_text(error), retryable=True)
    if isinstance(error, SmuvesError):
        return Fail(error_text(error), retryable=error.retryable)
    # An error nobody foresaw (a bug, a lost database connection): worth another attempt,
    # and the attempts bound how often it repeats.
    what = "export" if job.kind is JobKind.EXPORT else "fetch"
    return Fail(f"unexpected error during the {what}: {error_text(error)}", retryable=True)
