"""One portal's requests to HubSpot: the bearer token, the portal's budget, the retry policy,
bounded answers, and which typed error an answer means.

`Transport.get` / `post` send one request through the portal's shared budget (`ratelimit`)
and the retry policy (`retry`), read the answer as a stream never past
`hubspot_max_response_bytes`, and return its JSON object or raise the typed error of
`smuves_sync.errors`: a 429 becomes `HubSpotRateLimited` (a short-window `Retry-After` capped
at `hubspot_max_retry_after_seconds`) or, for the `DAILY` policy, `HubSpotDailyLimitReached`
with `resets_at`; other statuses map as `responses.error_for_status` says (no connection, a
dropped one, a timeout, 502/503/504: `HubSpotUnavailable`, which waits on the process's
outage, `limits.outage`, before it fails). The token is held
as a `SecretStr`, added to each request at send time, and never appears in a log line, a repr
or an error message. `requests` counts every request sent (each attempt).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Generator, Mapping
from datetime import tzinfo
from typing import Any

import httpx
from pydantic import SecretStr

from smuves_sync import metrics
from smuves_sync.errors import (
    HubSpotDailyLimitReached,
    HubSpotError,
    HubSpotRateLimited,
    HubSpotRetryableError,
    HubSpotUnavailable,
    MalformedResponse,
    ResponseTooLarge,
    WriteOutcomeUnknown,
)
from smuves_sync.hubspot.lanes import Lane
from smuves_sync.hubspot.limit_headers import MAX_DAILY_RESET_SECONDS, parse_retry_after
from smuves_sync.hubspot.outage import transport_cause
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.responses import error_for_status, json_object, read_capped, read_error
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

# An error answer is read this far at most: its message and ids sit at the start, and a
# 5xx or 429 with a runaway body must still be retried or waited on as what it is.
_ERROR_BODY_BYTES = 64 * 1024


def _parsed(
    content: bytes, headers: httpx.Headers, request: str, status: int, context: dict[str, Any]
) -> dict[str, Any]:
    """A successful answer's JSON object; {} for an answer without a body (204: push-live,
    publish)."""
    if status == 204 or (not request.startswith("GET ") and not content.strip()):
        return {}
    try:
        return json_object(content, headers)
    except ValueError as exc:
        raise MalformedResponse(f"{request}: {exc}", status=status, **context) from None


class _BearerAuth(httpx.Auth):
    """Adds the bearer header at send time, so the token lives in one `SecretStr` only."""

    def __init__(self, token: SecretStr) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        yield request

    def __repr__(self) -> str:
        return "_BearerAuth(token=**********)"


class Transport:
    """Sends one portal's requests to HubSpot."""

    def __init__(
        self,
        portal_id: int,
        token: SecretStr,
        settings: Settings,
        limits: RateLimitRegistry,
        *,
        retry: RetryPolicy | None = None,
        portal_timezone: tzinfo | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.portal_id = portal_id
        self.token = token
        self.auth = _BearerAuth(token)
        self._max_body = settings.hubspot_max_response_bytes
        self._max_retry_after = settings.hubspot_max_retry_after_seconds
        self._retry = retry or RetryPolicy.from_settings(settings)
        self._clock = limits.clock
        self._outage = limits.outage
        self.budget = limits.budget(portal_id, timezone=portal_timezone)
        # Requests sent (each attempt counts): what a fetch reports it cost.
        self.requests = 0
        self.http = httpx.AsyncClient(
            base_url=settings.hubspot_base_url,
            timeout=settings.hubspot_timeout_seconds,
            headers={"Accept": "application/json", "User-Agent": "smuves-sync"},
            transport=transport,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.http.aclose()

    def lane(self, requests: int) -> Lane:
        """A request chain of the portal's budget, expecting `requests` more requests."""
        return self.budget.lane(requests)

    async def get(
        self, asked: str, path: str, params: Mapping[str, str], lane: Lane | None = None
    ) -> dict[str, Any]:
        """GET `path` through the budget and the retry policy; the JSON object it answered."""

        async def send() -> dict[str, Any]:
            return await self._send_once(asked, path, params, lane)

        return await self._run(asked, send)

    async def post(
        self, asked: str, path: str, params: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """POST a JSON body that only reads (a batch read), through the budget and the retry
        policy, which may send it again; the JSON object answered (200 or 207)."""

        async def send() -> dict[str, Any]:
            return await self._send_once(asked, path, params, None, body)

        return await self._run(asked, send)

    async def write(
        self,
        asked: str,
        method: str,
        path: str,
        body: Mapping[str, Any] | None,
        params: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send one write (PATCH, or a POST that changes something) through the budget, never
        retried: HubSpot has no idempotency key on CMS writes, so a lost answer (a timeout, a
        dropped connection, a 5xx) raises `WriteOutcomeUnknown` for the caller to decide by
        reading the objects back. A short-window 429 is refused before processing: it waits on
        the portal's budget and goes again, spending nothing. The JSON object answered (200,
        207; {} for a 204)."""
        waits = 0
        while True:
            try:
                return await self._send_once(asked, path, params or {}, None, body, method)
            except HubSpotDailyLimitReached:
                raise
            except HubSpotRateLimited as exc:
                waits += 1
                if waits > self._retry.max_rate_limit_waits:
                    raise
                delay = self.budget.rate_limited(exc.policy, exc.retry_after)
                if delay > 0:
                    await self._clock.sleep(delay)
            except HubSpotRetryableError as exc:
                raise WriteOutcomeUnknown(
                    f"the answer to {method} {path} was lost ({exc}); it may have been applied",
                    portal_id=self.portal_id,
                    content_type=str(asked),
                    status=exc.status,
                    correlation_id=exc.correlation_id,
                ) from exc

    async def _run(
        self, asked: str, send: Callable[[], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        def on_rate_limited(exc: HubSpotRateLimited) -> float:
            return self.budget.rate_limited(exc.policy, exc.retry_after)

        return await self._retry.run(
            send,
            clock=self._clock,
            on_rate_limited=on_rate_limited,
            outage=self._outage,
            context={"portal_id": self.portal_id, "content_type": str(asked)},
        )

    async def _send_once(
        self,
        asked: str,
        path: str,
        params: Mapping[str, str],
        lane: Lane | None,
        body: Mapping[str, Any] | None = None,
        method: str | None = None,
    ) -> dict[str, Any]:
        context: dict[str, Any] = {"portal_id": self.portal_id, "content_type": str(asked)}
        resets_at = self.budget.daily_resets_at()
        if resets_at is not None:
            raise HubSpotDailyLimitReached(
                f"the portal's daily HubSpot API limit is spent until {resets_at.isoformat()}",
                resets_at=resets_at,
                **context,
            )
        await self.budget.acquire(lane)
        self.requests += 1
        method = method or ("GET" if body is None else "POST")
        request = f"{method} {path}"
        status: int | None = None
        try:
            async with self.http.stream(
                method, path, params=params, json=body, auth=self.auth
            ) as response:
                status, headers = response.status_code, response.headers
                self.budget.observe(headers)
                metrics.hubspot_response(status)
                ok = 200 <= status < 300
                content, whole = await read_capped(
                    response, self._max_body if ok else _ERROR_BODY_BYTES
                )
        except httpx.TransportError as exc:
            if status is None:  # else counted already, with the status it came with
                metrics.hubspot_response(None)
            raise HubSpotUnavailable(
                f"could not complete {request}: {type(exc).__name__}",
                cause=transport_cause(exc),
                **context,
            ) from exc
        log.debug("%s %s -> %d", request, dict(params), status)
        if status == 429:
            raise self._rate_limit_error(content, headers, request, context)
        if not ok:
            # A cut error body still gives its message and ids: they come first.
            info = read_error(content, headers, self.token.get_secret_value())
            raise error_for_status(status, info, request, **context)
        if not whole:
            raise ResponseTooLarge(
                f"HubSpot's answer to {request} is larger than {self._max_body:,} bytes "
                f"(SMUVES_HUBSPOT_MAX_RESPONSE_BYTES); reading stopped there",
                status=status,
                correlation_id=headers.get("X-HubSpot-Correlation-Id"),
                **context,
            )
        return _parsed(content, headers, request, status, context)

    def _rate_limit_error(
        self, content: bytes, headers: httpx.Headers, request: str, context: dict[str, Any]
    ) -> HubSpotError:
        info = read_error(content, headers, self.token.get_secret_value())
        metrics.hubspot_rate_limited(info.policy)
        retry_after = parse_retry_after(headers.get("Retry-After"), self._clock.now())
        extra = {"status": 429, "correlation_id": info.correlation_id, **context}
        if info.policy == "DAILY":
            if retry_after is not None and retry_after > MAX_DAILY_RESET_SECONDS:
                log.warning(
                    "portal %s: a DAILY 429 says the limit resets in %.0f hours, refused as "
                    "malformed; parking until the next midnight instead",
                    self.portal_id,
                    retry_after / 3600,
                )
                retry_after = None
            resets_at = self.budget.daily_limit_reached(retry_after)
            return HubSpotDailyLimitReached(
                f"the portal's daily HubSpot API limit is spent ({request}); "
                f"it resets at {resets_at.isoformat()}",
                resets_at=resets_at,
                **extra,
            )
        if retry_after is not None and retry_after > self._max_retry_after:
            log.warning(
                "portal %s: a %s 429 asks for a %.0f s pause; pausing %.0f s "
                "(SMUVES_HUBSPOT_MAX_RETRY_AFTER_SECONDS)",
                self.portal_id,
                info.policy or "short-window",
                retry_after,
                self._max_retry_after,
            )
            retry_after = self._max_retry_after
        return HubSpotRateLimited(
            f"HubSpot rate limit {info.policy or 'unknown policy'} reached ({request})",
            policy=info.policy,
            retry_after=retry_after,
            **extra,
        )

    def malformed(self, asked: str, detail: str) -> MalformedResponse:
        """The error of an answer of the wrong shape."""
        return MalformedResponse(
            f"HubSpot's answer has the wrong shape: {detail}",
            portal_id=self.portal_id,
            content_type=str(asked),
        )
