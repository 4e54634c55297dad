"""Every error smuves-sync raises on purpose, in one tree.

    SmuvesError
    ├── ConfigurationError          settings missing or contradictory (exit code 2)
    │   └── TokenKeyMissing         a stored token is under no key of SMUVES_SECRET_KEY
    ├── InvalidInput                a value from outside failed validation; nothing was changed
    │   ├── UnknownContentType
    │   ├── InvalidCronExpression
    │   ├── TokenPortalMismatch     HubSpot says the token belongs to another portal (HTTP 422)
    │   └── TokenRejected           HubSpot refused the token a portal is connected with (422)
    ├── NotFound                    no such portal / run / job / export (or not visible to you)
    ├── PortalNeedsReconnect        HubSpot refused the portal's token: nothing is asked until
    │                               it is reconnected (HTTP 422, exit 2)
    ├── NotPermitted                your role in the portal does not allow it (a viewer) (403)
    │   └── DatabaseRefused         (also a DatabaseError) a grant or policy refused it
    ├── DatabaseError               the database failed a statement (any driver error; the
    │   │                           driver's own exception is its __cause__)
    │   ├── DatabaseUnavailable     connection lost or refused, no pooled connection in time,
    │   │                           a conflict or cancel: retryable (HTTP 503)
    │   ├── SchemaMismatch          a function, table or column missing, or a wrong query
    │   ├── DatabaseRefused         (see NotPermitted)
    │   └── MigrationError          a migration failed, or an applied file was edited
    ├── QueueError
    │   ├── LeaseLost               another worker took the job over; stop touching it
    │   └── AllDuplicateJobs        every requested type is already in flight (HTTP 409, exit 3)
    │       └── ChangesetBeingPushed  a push of the changeset is in flight (409, exit 3)
    └── HubSpotError                carries portal id, content type, HTTP status, correlation id
        ├── HubSpotRetryableError   transport errors, 5xx, 423, 477: worth another attempt
        │   ├── HubSpotUnavailable  no connection, or 502/503/504: HubSpot, not the request
        │   └── WriteOutcomeUnknown a write's answer was lost (timeout, 5xx, dropped): it
        │                           may have committed; decided by reading back, never resent
        ├── HubSpotUnreachable      unavailable for longer than the outage bound (not retried)
        ├── HubSpotRateLimited      a 429 whose window is short (TEN_SECONDLY_ROLLING, SECONDLY)
        │   └── HubSpotDailyLimitReached   park the job until `resets_at`, keep its cursor
        ├── HubSpotBadRequest       400
        ├── HubSpotAuthError        401: token revoked or wrong
        ├── ContentTypeUnavailable  403: missing scope or product tier
        ├── HubSpotNotFound         404
        ├── ResponseTooLarge        a body past SMUVES_HUBSPOT_MAX_RESPONSE_BYTES (not retried)
        ├── RunawayListing          far more objects than HubSpot counted: cursors that never end
        └── MalformedResponse       not JSON, wrong shape, or a cursor that repeats

`retryable` tells the queue whether a failure may spend another attempt. Messages are written
for the person who must act on them and never contain a token.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime


class SmuvesError(Exception):
    """Base of every deliberate smuves-sync error."""

    retryable: bool = False


class ConfigurationError(SmuvesError):
    """Settings are missing or contradictory."""


class TokenKeyMissing(ConfigurationError):
    """A stored portal token decrypts with no key of ``SMUVES_SECRET_KEY``: the key it was
    encrypted with is not configured in this process."""


class InvalidInput(SmuvesError, ValueError):
    """A value from outside (CLI, API, HubSpot) failed validation; nothing was changed."""


class UnknownContentType(InvalidInput):
    """A content type word that the registry does not know."""

    def __init__(self, word: str, known: Sequence[str]) -> None:
        super().__init__(f"unknown content type {word!r}; known types: {', '.join(known)}")
        self.word = word


class InvalidCronExpression(InvalidInput):
    """A schedule's cron expression does not parse."""


class TokenPortalMismatch(InvalidInput):
    """The token belongs to another HubSpot portal than the one it was given for."""

    code = "TOKEN_PORTAL_MISMATCH"

    def __init__(self, portal_id: int, token_portal_id: int) -> None:
        super().__init__(
            f"{self.code}: HubSpot says this token belongs to portal {token_portal_id}, not "
            f"{portal_id}; connect a portal with a private app token of that portal"
        )
        self.portal_id = portal_id
        self.token_portal_id = token_portal_id


class TokenRejected(InvalidInput):
    """HubSpot refused the token offered to connect a portal (401 or 403)."""

    code = "HUBSPOT_TOKEN_REJECTED"


class NotFound(SmuvesError, LookupError):
    """The thing asked for does not exist, or the caller may not see it."""


class PortalNeedsReconnect(SmuvesError):
    """HubSpot refused the portal's token (401); nothing more is asked of HubSpot for the
    portal until it is reconnected with a new token."""

    code = "PORTAL_NEEDS_RECONNECT"

    def __init__(self, portal_id: int) -> None:
        super().__init__(
            f"{self.code}: HubSpot refused the token of portal {portal_id} (401): it was "
            "revoked, has expired or is wrong. Reconnect the portal with a new private app "
            f"token (`smuves portal add {portal_id} --name NAME --token-stdin`, or the API's "
            "POST /v1/portals), then start the fetch again"
        )
        self.portal_id = portal_id


class NotPermitted(SmuvesError, PermissionError):
    """The caller may see the portal but its role there (a viewer) does not allow the change."""


class DatabaseError(SmuvesError):
    """The database refused or failed an operation. Raised by ``smuves_sync.db`` in place of
    the driver's error (kept as ``__cause__``); `sqlstate` is its SQLSTATE code, if any."""

    sqlstate: str | None = None


class DatabaseUnavailable(DatabaseError):
    """The database could not be reached or did not finish the statement: a lost or refused
    connection, no pooled connection in time, a serialization conflict or a cancel. Worth
    another try once it is back."""

    retryable = True


class SchemaMismatch(DatabaseError):
    """The database could not run the statement as written: a function, table or column is
    missing (a half-finished deploy) or the query is wrong. Not the data's fault."""


class DatabaseRefused(NotPermitted, DatabaseError):
    """A grant or row-level security policy refused the statement (SQLSTATE 42501)."""


class MigrationError(DatabaseError):
    """A migration could not be applied, or an applied migration file changed."""


class QueueError(SmuvesError):
    """A queue operation could not be carried out."""


class LeaseLost(QueueError):
    """The job's lease token no longer matches: another worker owns the job now."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id}: lease lost to another worker; this worker stops")
        self.job_id = job_id


class AllDuplicateJobs(QueueError):
    """Every requested content type already has a job in flight for this portal."""

    code = "ALL_DUPLICATE_JOBS"

    def __init__(self, portal_id: int, run_ids: Sequence[int]) -> None:
        runs = ", ".join(str(r) for r in sorted(set(run_ids)))
        super().__init__(
            f"ALL_DUPLICATE_JOBS: every requested type of portal {portal_id} "
            f"is already being fetched by run(s) {runs}"
        )
        self.portal_id = portal_id
        self.run_ids = tuple(sorted(set(run_ids)))


class ChangesetBeingPushed(AllDuplicateJobs):
    """The changeset is being pushed already (HTTP 409, exit 3)."""

    def __init__(self, portal_id: int, changeset_id: int, run_ids: Sequence[int]) -> None:
        super().__init__(portal_id, run_ids)
        runs = ", ".join(str(r) for r in self.run_ids) or "another push"
        self.args = (
            f"{self.code}: changeset {changeset_id} of portal {portal_id} is already being "
            f"pushed (run {runs})",
        )
        self.changeset_id = changeset_id


class HubSpotError(SmuvesError):
    """HubSpot answered with an error or could not be reached."""

    def __init__(
        self,
        message: str,
        *,
        portal_id: int | None = None,
        content_type: str | None = None,
        status: int | None = None,
        correlation_id: str | None = None,
    ) -> None:
        context = [
            f"portal {portal_id}" if portal_id is not None else None,
            content_type,
            f"HTTP {status}" if status is not None else None,
            f"correlationId {correlation_id}" if correlation_id else None,
        ]
        where = ", ".join(part for part in context if part)
        super().__init__(f"{message} ({where})" if where else message)
        self.portal_id = portal_id
        self.content_type = content_type
        self.status = status
        self.correlation_id = correlation_id


class HubSpotRetryableError(HubSpotError):
    """A transient failure: network trouble, 5xx, 423 or 477."""

    retryable = True


class HubSpotUnavailable(HubSpotRetryableError):
    """HubSpot could not be reached, or its front answered 502/503/504: the service is down or
    cut off, not this request wrong. `cause` says how, in a few words ("connection refused")."""

    def __init__(self, message: str, *, cause: str, **context: object) -> None:
        super().__init__(message, **context)  # type: ignore[arg-type]
        self.cause = cause


class WriteOutcomeUnknown(HubSpotRetryableError):
    """A write was sent and its answer lost (a timeout, a 5xx, a dropped connection): HubSpot
    may have applied it. Never sent again blindly: the objects are read back to decide."""


class HubSpotUnreachable(HubSpotError):
    """HubSpot stayed unavailable longer than the outage bound; `lasted` seconds, `cause` how.

    Not retryable: the job waited out the outage without spending attempts, and another
    attempt now would only wait again. The message is the note a person acts on."""

    def __init__(self, message: str, *, lasted: float, cause: str, **context: object) -> None:
        super().__init__(message, **context)  # type: ignore[arg-type]
        self.lasted = lasted
        self.cause = cause


class HubSpotRateLimited(HubSpotError):
    """A 429 with a short window; waiting is the cure and it never costs an attempt."""

    retryable = True

    def __init__(
        self, message: str, *, policy: str | None, retry_after: float | None, **context: object
    ) -> None:
        super().__init__(message, **context)  # type: ignore[arg-type]
        self.policy = policy
        self.retry_after = retry_after


class HubSpotDailyLimitReached(HubSpotRateLimited):
    """The portal's daily request budget is spent; the job waits for `resets_at`."""

    def __init__(self, message: str, *, resets_at: datetime, **context: object) -> None:
        super().__init__(message, policy="DAILY", retry_after=None, **context)
        self.resets_at = resets_at


class HubSpotBadRequest(HubSpotError):
    """400: the request itself is wrong; retrying will not help."""


class HubSpotAuthError(HubSpotError):
    """401: the portal's token is revoked, expired or wrong. Reconnect the portal."""


class ContentTypeUnavailable(HubSpotError):
    """403: the token lacks the scope, or the portal's tier lacks the product, for this type."""


class HubSpotNotFound(HubSpotError):
    """404: the portal or object does not exist at HubSpot."""


class MalformedResponse(HubSpotError):
    """HubSpot's answer does not have the shape the API promises."""


class ResponseTooLarge(HubSpotError):
    """An answer larger than the body limit; reading stopped there.

    Not retryable: the same request brings the same page back, and trying again would only
    download the limit's worth once more before failing the same way.
    """


class RunawayListing(HubSpotError):
    """A listing produced far more objects than HubSpot counted: its cursors never end.

    Not retryable: the job would resume from the runaway's own cursor. The next fetch counts
    afresh and lists from the start.
    """
