"""The async HubSpot CMS client: count a content type, and page through it from a saved cursor.

Usage (one registry of rate-limit budgets per process, shared by every client)::

    limits = RateLimitRegistry()
    async with HubSpotClient(portal_id, token, settings, limits) as client:
        total = await client.count("site_page")
        async for page in client.pages("site_page", cursor=saved_cursor):
            store(page.items)          # ContentRecord: promoted fields + `raw`
            checkpoint(page.cursor)    # resuming from it continues after this page

`pages` walks the live objects, then (for types that have one) a second pass with
`archived=true`; HubDB rows are walked table by table, tables in id order. The cursor of the
last page is a "done" cursor: resuming from it yields nothing. A listing is one request chain
(a `Lane`) of the portal's budget, which serves the chain with the most requests still to go
first: pass `expected` (objects still to come, e.g. the count minus what is stored) so the
budget knows from the first request; without it the listing's own `total` is used.

Errors are the typed ones of `smuves_sync.errors`, each with the portal id, the content type
and HubSpot's correlation id: transient failures are retried here first (see `retry`), 429s
wait on the portal's shared budget (see `ratelimit`; a short-window `Retry-After` is capped at
`hubspot_max_retry_after_seconds`), a spent daily budget raises `HubSpotDailyLimitReached`
with `resets_at`, a 403 raises `ContentTypeUnavailable`, and any answer of the wrong shape
raises `MalformedResponse` (a page: an object of the wrong shape is only set aside, in
`Page.rejects`). Answers are bounded: bodies are streamed and never read past
`hubspot_max_response_bytes` (`ResponseTooLarge`), and a listing that runs far past HubSpot's
count raises `RunawayListing`. The token is held as a `SecretStr` and never appears in a log
line, a repr or an error message.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Mapping
from dataclasses import dataclass
from datetime import tzinfo
from types import TracebackType
from typing import Any, TypeGuard

import httpx
from pydantic import SecretStr

from smuves_sync import metrics
from smuves_sync.errors import (
    HubSpotDailyLimitReached,
    HubSpotError,
    HubSpotRateLimited,
    HubSpotRetryableError,
    MalformedResponse,
    ResponseTooLarge,
    RunawayListing,
)
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.lanes import Lane
from smuves_sync.hubspot.paging import ForwardPaging, ListingBound, Position
from smuves_sync.hubspot.ratelimit import (
    MAX_DAILY_RESET_SECONDS,
    RateLimitRegistry,
    parse_retry_after,
)
from smuves_sync.hubspot.registry import (
    DEFAULT_REGISTRY,
    ContentRecord,
    ContentTypeRegistry,
    ContentTypeSpec,
    RejectedObject,
)
from smuves_sync.hubspot.responses import error_for_status, json_object, read_capped, read_error
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.settings import Settings

log = logging.getLogger(__name__)

# An error answer is read this far at most: its message and ids sit at the start, and a
# 5xx or 429 with a runaway body must still be retried or waited on as what it is.
_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing and the cursor that resumes right after it; `rejects` are the
    objects of the page that could not be read (kept aside, not fatal)."""

    items: tuple[ContentRecord, ...]
    cursor: str
    archived: bool = False
    rejects: tuple[RejectedObject, ...] = ()

    @property
    def objects(self) -> int:
        """How many objects the page lists: an object listed twice counts once, and every
        object that could not be read counts too."""
        ids = {item.hubspot_id for item in self.items}
        return len(ids) + sum(1 for r in self.rejects if r.hubspot_id not in ids)


class _BearerAuth(httpx.Auth):
    """Adds the bearer header at send time, so the token lives in one `SecretStr` only."""

    def __init__(self, token: SecretStr) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token.get_secret_value()}"
        yield request

    def __repr__(self) -> str:
        return "_BearerAuth(token=**********)"


class HubSpotClient:
    """Reads one portal's CMS content through HubSpot's list endpoints."""

    def __init__(
        self,
        portal_id: int,
        token: SecretStr | str,
        settings: Settings,
        limits: RateLimitRegistry,
        *,
        registry: ContentTypeRegistry = DEFAULT_REGISTRY,
        retry: RetryPolicy | None = None,
        portal_timezone: tzinfo | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.portal_id = portal_id
        self._token = token if isinstance(token, SecretStr) else SecretStr(token)
        self._auth = _BearerAuth(self._token)
        self._api_version = settings.hubspot_api_version
        self._max_body = settings.hubspot_max_response_bytes
        self._max_retry_after = settings.hubspot_max_retry_after_seconds
        self._registry = registry
        self._retry = retry or RetryPolicy.from_settings(settings)
        self._clock = limits.clock
        self._budget = limits.budget(portal_id, timezone=portal_timezone)
        self._http = httpx.AsyncClient(
            base_url=settings.hubspot_base_url,
            timeout=settings.hubspot_timeout_seconds,
            headers={"Accept": "application/json", "User-Agent": "smuves-sync"},
            transport=transport,
        )

    def __repr__(self) -> str:
        return (
            f"HubSpotClient(portal_id={self.portal_id}, base_url={str(self._http.base_url)!r}, "
            f"api_version={self._api_version!r})"
        )

    async def __aenter__(self) -> HubSpotClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()

    # -- public API -----------------------------------------------------------------------------

    async def count(self, content_type: str, *, archived: bool = False) -> int:
        """How many objects of `content_type` HubSpot holds (the archived ones if asked)."""
        spec = self._registry.get(content_type)
        if spec.parent is None:
            return await self._listing_total(spec.name, spec.list_path(self._api_version), archived)
        if archived and not spec.archived_pass:
            return 0
        parents = await self._parent_records(spec)
        # The parent's count field counts live children only.
        if archived or spec.parent_count_field is None:
            total = 0
            for parent in parents:
                path = spec.list_path(self._api_version, parent.hubspot_id)
                total += await self._listing_total(spec.name, path, archived)
            return total
        return sum(self._child_count(spec, parent) for parent in parents)

    async def pages(
        self,
        content_type: str,
        cursor: str | None = None,
        *,
        include_archived: bool = True,
        expected: int | None = None,
    ) -> AsyncGenerator[Page, None]:
        """Every page of `content_type`, from the beginning or from a page's saved `cursor`.

        `expected`: how many objects are still to come (both passes), if the caller knows.
        It also bounds the listing: one that produces far more (`paging.runaway_limit`; the
        listings' own totals when `expected` is None) raises `RunawayListing`.
        """
        spec = self._registry.get(content_type)
        state = Cursor.decode(cursor, spec.name) if cursor else Cursor(str(spec.name))
        if state.done:
            return
        left = expected
        bound = ListingBound(spec.page_size, expected)
        lane = self._budget.lane(_requests_for(left, spec.page_size))
        try:
            passes = [False, True] if include_archived and spec.archived_pass else [False]
            parents: list[str | None] = [None]
            if spec.parent is not None:
                records = await self._parent_records(spec, lane)
                parents = [*sorted((p.hubspot_id for p in records), key=_id_key)]
            for archived in passes:
                if state.archived and not archived:
                    continue  # the live pass was finished before the cursor was saved
                resuming_pass = state.archived == archived
                todo = _from_saved_parent(parents, state) if resuming_pass else parents
                for index, parent_id in enumerate(todo):
                    resuming = resuming_pass and parent_id == state.parent and not state.parent_done
                    start = state.position if resuming else Position()
                    path = spec.list_path(self._api_version, parent_id)
                    seen = 0
                    async for items, rejects, nxt, total in self._walk(
                        spec, path, archived, start, parent_id, spec.name, lane
                    ):
                        listed = len(items) + len(rejects)
                        if seen == 0:
                            bound.part_started(total)
                        if not bound.add(listed):
                            raise RunawayListing(
                                f"the {spec.name} listing does not end: {bound.describe()}; "
                                "HubSpot keeps handing out new cursors. The next fetch counts "
                                "afresh and lists from the start",
                                portal_id=self.portal_id,
                                content_type=str(spec.name),
                            )
                        seen += listed
                        if left is not None:
                            left = max(left - listed, 0)
                            lane.expect(_requests_for(left, spec.page_size))
                        elif total is not None:
                            lane.expect(_requests_for(max(total - seen, 0), spec.page_size))
                        if nxt is not None:
                            after = Cursor(spec.name, archived, nxt, parent=parent_id)
                        elif index < len(todo) - 1:
                            after = Cursor(spec.name, archived, parent=parent_id, parent_done=True)
                        elif archived is not passes[-1]:
                            after = Cursor(spec.name, archived=True)
                        else:
                            after = Cursor(spec.name, archived, done=True)
                        yield Page(items, after.encode(), archived, rejects)
        finally:
            lane.close()

    # -- listings -------------------------------------------------------------------------------

    async def _walk(
        self,
        spec: ContentTypeSpec,
        path: str,
        archived: bool,
        start: Position,
        parent_id: str | None,
        asked: str,
        lane: Lane | None = None,
    ) -> AsyncIterator[
        tuple[tuple[ContentRecord, ...], tuple[RejectedObject, ...], Position | None, int | None]
    ]:
        """The records of each page of one listing, the objects it could not read, the position
        of the page after it, and the listing's `total` if the body gives one.

        `asked` is the content type the caller asked for, named in errors (a failing HubDB
        tables listing fails the `hubdb_row` fetch that needed it).
        """
        paging = ForwardPaging(start)
        position = start
        while True:
            params = {"limit": str(spec.page_size), **position.query()}
            if archived:
                params["archived"] = "true"
            body = await self._get(asked, path, params, lane)
            try:
                results = _results(body)
                nxt = paging.advance(body, len(results))
            except ValueError as exc:  # PagingError, or no `results` list: the page is broken
                raise self._malformed(asked, f"GET {path}: {exc}") from None
            # An object that cannot be read is set aside, never the page's failure.
            records, rejects = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
            if rejects:
                log.warning(
                    "portal %s: %d %s object(s) of GET %s cannot be read: %s",
                    self.portal_id,
                    len(rejects),
                    spec.name,
                    path,
                    rejects[0].reason,
                )
            total = body.get("total")
            yield records, rejects, nxt, total if _is_count(total) else None
            if nxt is None:
                return
            position = nxt

    async def _parent_records(
        self, spec: ContentTypeSpec, lane: Lane | None = None
    ) -> list[ContentRecord]:
        assert spec.parent is not None
        parent = self._registry.get(spec.parent)
        path = parent.list_path(self._api_version)
        found: list[ContentRecord] = []
        # A parent that cannot be read has no children to list; its own type's fetch records it.
        async for records, _, _, _ in self._walk(
            parent, path, False, Position(), None, spec.name, lane
        ):
            found.extend(records)
        return found

    async def _listing_total(self, asked: str, path: str, archived: bool) -> int:
        params = {"limit": "1", **({"archived": "true"} if archived else {})}
        body = await self._get(asked, path, params)
        total = body.get("total")
        if not _is_count(total):
            raise self._malformed(asked, f"GET {path}: 'total' is missing or not a count")
        return total

    def _child_count(self, spec: ContentTypeSpec, parent: ContentRecord) -> int:
        assert spec.parent_count_field is not None
        value = parent.raw.get(spec.parent_count_field)
        if not _is_count(value):
            raise self._malformed(
                spec.name,
                f"{spec.parent} {parent.hubspot_id}: '{spec.parent_count_field}' is not a count",
            )
        return value

    # -- one request ----------------------------------------------------------------------------

    async def _get(
        self, asked: str, path: str, params: Mapping[str, str], lane: Lane | None = None
    ) -> dict[str, Any]:
        """GET `path` through the budget and the retry policy; the JSON object it answered."""

        async def send() -> dict[str, Any]:
            return await self._send_once(asked, path, params, lane)

        def on_rate_limited(exc: HubSpotRateLimited) -> float:
            return self._budget.rate_limited(exc.policy, exc.retry_after)

        return await self._retry.run(send, clock=self._clock, on_rate_limited=on_rate_limited)

    async def _send_once(
        self, asked: str, path: str, params: Mapping[str, str], lane: Lane | None
    ) -> dict[str, Any]:
        context: dict[str, Any] = {"portal_id": self.portal_id, "content_type": str(asked)}
        resets_at = self._budget.daily_resets_at()
        if resets_at is not None:
            raise HubSpotDailyLimitReached(
                f"the portal's daily HubSpot API limit is spent until {resets_at.isoformat()}",
                resets_at=resets_at,
                **context,
            )
        await self._budget.acquire(lane)
        request = f"GET {path}"
        status: int | None = None
        try:
            async with self._http.stream("GET", path, params=params, auth=self._auth) as response:
                status, headers = response.status_code, response.headers
                self._budget.observe(headers)
                metrics.hubspot_response(status)
                ok = 200 <= status < 300
                content, whole = await read_capped(
                    response, self._max_body if ok else _ERROR_BODY_BYTES
                )
        except httpx.TransportError as exc:
            if status is None:  # else counted already, with the status it came with
                metrics.hubspot_response(None)
            raise HubSpotRetryableError(
                f"could not complete {request}: {type(exc).__name__}", **context
            ) from exc
        log.debug("%s %s -> %d", request, dict(params), status)
        if status == 429:
            raise self._rate_limit_error(content, headers, request, context)
        if not ok:
            # A cut error body still gives its message and ids: they come first.
            info = read_error(content, headers, self._token.get_secret_value())
            raise error_for_status(status, info, request, **context)
        if not whole:
            raise ResponseTooLarge(
                f"HubSpot's answer to {request} is larger than {self._max_body:,} bytes "
                f"(SMUVES_HUBSPOT_MAX_RESPONSE_BYTES); reading stopped there",
                status=status,
                correlation_id=headers.get("X-HubSpot-Correlation-Id"),
                **context,
            )
        try:
            return json_object(content, headers)
        except ValueError as exc:
            raise MalformedResponse(f"{request}: {exc}", status=status, **context) from None

    def _rate_limit_error(
        self, content: bytes, headers: httpx.Headers, request: str, context: dict[str, Any]
    ) -> HubSpotError:
        info = read_error(content, headers, self._token.get_secret_value())
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
            resets_at = self._budget.daily_limit_reached(retry_after)
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

    def _malformed(self, asked: str, detail: str) -> MalformedResponse:
        return MalformedResponse(
            f"HubSpot's answer has the wrong shape: {detail}",
            portal_id=self.portal_id,
            content_type=str(asked),
        )


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _requests_for(objects: int | None, page_size: int) -> int:
    """Requests a listing needs for `objects` more objects (one if unknown: the least urgent)."""
    if objects is None:
        return 1
    # The closing request of each pass may come back with fewer objects, or none.
    return math.ceil(objects / page_size) + 1


def _results(body: Mapping[str, Any]) -> list[Any]:
    results = body.get("results")
    if not isinstance(results, list):
        raise ValueError("'results' is missing or not a list")
    return results


def _from_saved_parent(parents: list[str | None], state: Cursor) -> list[str | None]:
    """The parents still to walk when resuming: from the saved one (or the next, if it is gone)."""
    if state.parent is None:
        return parents
    saved = _id_key(state.parent)
    return [
        p
        for p in parents
        if p is not None and (_id_key(p) > saved or (_id_key(p) == saved and not state.parent_done))
    ]


def _id_key(object_id: str) -> tuple[int, int, str]:
    # Numeric ids in numeric order, anything else after them in text order.
    return (0, int(object_id), "") if object_id.isdigit() else (1, 0, object_id)
