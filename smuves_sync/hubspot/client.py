"""The async HubSpot CMS client: count a content type, and page through it from a saved cursor.

Usage (one registry of rate-limit budgets per process, shared by every client)::

    limits = RateLimitRegistry()
    async with HubSpotClient(portal_id, token, settings, limits) as client:
        account = await client.verify_portal()   # the token is portal_id's, or an error
        total = await client.count("site_page")
        async for page in client.pages("site_page", cursor=saved_cursor):
            store(page.items)          # ContentRecord: promoted fields + `raw`
            checkpoint(page.cursor)    # resuming from it continues after this page

`pages` walks the live objects, then (for types that have one) a second pass with
`archived=true`; HubDB rows are walked table by table, tables in id order. The cursor of the
last page is a "done" cursor: resuming from it yields nothing. With `verify=True` the listing
is checked at its end (counted again, against its counts when it began and what was created
since; HubSpot's offsets move under deletions) and, when it may have missed objects,
completed by another pass whose pages follow. `confirm` asks about objects by id (batch
reads, else one by one): which HubSpot still holds, which are gone.

A listing is one request chain
(a `Lane`) of the portal's budget, which serves the chain with the most requests still to go
first: pass `expected` (objects still to come, e.g. the count minus what is stored) so the
budget knows from the first request; without it the listing's own `total` is used.

Errors are the typed ones of `smuves_sync.errors`, each with the portal id, the content type
and HubSpot's correlation id: transient failures are retried here first (see `retry`; HubSpot
unreachable is waited out on the process's outage, `outage`, then `HubSpotUnreachable`), 429s
wait on the portal's shared budget (see `ratelimit`; a short-window `Retry-After` is capped at
`hubspot_max_retry_after_seconds`), a spent daily budget raises `HubSpotDailyLimitReached`
with `resets_at`, a 403 raises `ContentTypeUnavailable`, and any answer of the wrong shape
raises `MalformedResponse` (a page: an object of the wrong shape is only set aside, in
`Page.rejects`). Answers are bounded: bodies are streamed and never read past
`hubspot_max_response_bytes` (`ResponseTooLarge`), a body of more JSON values than
`responses.MAX_BODY_VALUES` is refused unparsed and a page of more results than asked for is
refused too (`MalformedResponse`), and a listing that runs far past HubSpot's count raises
`RunawayListing`. The token is held as a `SecretStr` and never appears in a log
line, a repr or an error message.

The client is a facade: each request goes through its `transport.Transport` (token, budget,
retries, bounded answers, the 429 mapping), the full listings are `listing.Listing`'s, the
questions by id `confirm.Confirmer`'s and an incremental fetch's listings (what changed since a
moment, ids only, changed parents) `changes.Changes`'s, all three built by the client over its
one transport, and so are its writes (`writer()`, `writes.Writer`). `requests` counts what it
sent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from datetime import tzinfo
from types import TracebackType

import httpx
from pydantic import SecretStr

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    TokenPortalMismatch,
    TokenRejected,
)
from smuves_sync.hubspot.account import AccountDetails, account_details_path, token_shape
from smuves_sync.hubspot.changes import Changes
from smuves_sync.hubspot.confirm import Confirmation, Confirmer
from smuves_sync.hubspot.cursor import Baseline, Cursor
from smuves_sync.hubspot.listing import Listing, Page, requests_for
from smuves_sync.hubspot.opening import Opening, StoredAmong
from smuves_sync.hubspot.paging import ListingBound
from smuves_sync.hubspot.parents import ParentState, listed_parents, parent_states
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.registry import DEFAULT_REGISTRY, ContentTypeRegistry
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.hubspot.transport import Transport
from smuves_sync.hubspot.whole import missed_why
from smuves_sync.hubspot.windows import WindowAnswer, Windows
from smuves_sync.hubspot.writes import Writer
from smuves_sync.settings import Settings

__all__ = ["HubSpotClient", "verify_portal_token"]

log = logging.getLogger(__name__)

# What the account-details request is called in errors and logs (it is no content type).
_ACCOUNT = "account_info"
# Connecting a portal waits on HubSpot's answer: a transient failure is tried once more, and
# HubSpot unreachable waited out a few seconds, then the person connecting is told to try again.
_VERIFY_RETRY = RetryPolicy(
    max_attempts=2, initial_backoff_seconds=0.5, max_rate_limit_waits=2, outage_max_seconds=5
)


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
        secret = token if isinstance(token, SecretStr) else SecretStr(token)
        self._transport = Transport(
            portal_id,
            secret,
            settings,
            limits,
            retry=retry,
            portal_timezone=portal_timezone,
            transport=transport,
        )
        self._api_version = settings.hubspot_api_version
        self._registry = registry
        self._clock = limits.clock
        # How far HubSpot's clock may trail ours when it dates a creation (see `whole`).
        self._margin_ms = int(settings.incremental_overlap_seconds * 1000)
        self._listing = Listing(self._transport, registry, self._api_version)
        self._confirmer = Confirmer(self._transport, registry, self._api_version)
        self._changes = Changes(self._transport, registry, self._api_version)
        self._windows = Windows(self._transport, registry, self._api_version)
        self._writer = Writer(self._transport, registry, self._api_version)

    def __repr__(self) -> str:
        return (
            f"HubSpotClient(portal_id={self.portal_id}, "
            f"base_url={str(self._transport.http.base_url)!r}, "
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
        await self._transport.aclose()

    @property
    def requests(self) -> int:
        """Requests sent so far (each attempt counts)."""
        return self._transport.requests

    @property
    def _auth(self) -> httpx.Auth:
        return self._transport.auth

    # -- public API -----------------------------------------------------------------------------

    async def account_details(self) -> AccountDetails:
        """HubSpot's details of the account the token belongs to (its portal, its time zone)."""
        path = account_details_path(self._api_version)
        body = await self._transport.get(_ACCOUNT, path, {})
        try:
            return AccountDetails.from_body(body)
        except ValueError as exc:
            raise self._transport.malformed(_ACCOUNT, f"GET {path}: {exc}") from None

    async def verify_portal(self) -> AccountDetails:
        """The account details, once HubSpot has said the token belongs to this client's
        portal: `TokenPortalMismatch` when it belongs to another, `TokenRejected` when HubSpot
        refuses it (401, 403). Other failures raise as any request's would."""
        if not token_shape(self._transport.token.get_secret_value()):
            raise TokenRejected(
                f"{TokenRejected.code}: the token has characters no HubSpot token has "
                "(visible ASCII only)"
            )
        try:
            details = await self.account_details()
        except (HubSpotAuthError, ContentTypeUnavailable) as exc:
            raise TokenRejected(
                f"{TokenRejected.code}: HubSpot refused the token (HTTP {exc.status}): it is "
                "revoked, expired or not a private app token"
            ) from None
        if details.portal_id != self.portal_id:
            raise TokenPortalMismatch(self.portal_id, details.portal_id)
        return details

    async def count(self, content_type: str, *, archived: bool = False) -> int:
        """How many objects of `content_type` HubSpot holds (the archived ones if asked)."""
        return await self._listing.count(content_type, archived=archived)

    async def pages(
        self,
        content_type: str,
        cursor: str | None = None,
        *,
        include_archived: bool = True,
        expected: int | None = None,
        listed: int = 0,
        verify: bool = False,
    ) -> AsyncGenerator[Page, None]:
        """Every page of `content_type`, from the beginning or from a page's saved `cursor`.

        `expected`: how many objects are still to come (both passes), if the caller knows.
        It also bounds the listing: one that produces far more (`paging.runaway_limit`; the
        listings' own totals when `expected` is None) raises `RunawayListing`.

        With `verify`, a listing is not taken to be whole on its word. HubSpot's cursors are
        offsets, so an object deleted while the listing runs moves another across a page
        boundary, unseen. At its end the type is counted again: unless the listing saw
        exactly that many objects (`listed`: those it produced before `cursor`, plus what it
        produces now), no page reported a total other than its part's first page did and,
        where the type takes `createdAfter`, each pass counts what it counted on its first
        page plus what was created since the listing began (so balanced creations and
        deletions show too; `whole`), a second pass follows — by creation time
        (`createdAfter`, which no deletion shifts) where the type supports it, else a listing
        from the start — and its pages come next, cursors and all. A `cursor` from a finished
        listing whose check has not run yet (the job stopped in between) runs the check again.
        """
        spec = self._registry.get(content_type)
        state = Cursor.decode(cursor, spec.name) if cursor else self._start(spec, verify)
        if state.done and (state.recheck or not verify):
            return
        passes = [False, True] if include_archived and spec.archived_pass else [False]
        lane = self._transport.lane(requests_for(expected, spec.page_size))
        try:
            if not state.recheck:
                end = state.encode()
                if not state.done:
                    bound = ListingBound(spec.page_size, expected)
                    walk = self._listing.offset_pages(spec, state, passes, lane, bound, expected)
                    async for page in walk:
                        listed += page.objects
                        end = page.cursor
                        yield page
                if not verify or not await self._missed(spec, passes, listed, end):
                    return
                state = Cursor(str(spec.name), recheck=True)
            bound = ListingBound(spec.page_size)
            if spec.created_keyset:
                again = self._listing.keyset_pages(spec, state, passes, lane, bound)
            else:
                again = self._listing.offset_pages(spec, state, passes, lane, bound, None)
            async for page in again:
                yield page
        finally:
            lane.close()

    def _start(self, spec: ContentTypeSpec, verify: bool) -> Cursor:
        """Where a listing from the beginning starts. One that is checked at its end, of a type
        whose listing takes `createdAfter`, keeps a `Baseline` from now, less the margin for
        HubSpot's clock (`incremental_overlap_seconds`)."""
        if not (verify and spec.created_keyset and spec.parent is None):
            return Cursor(str(spec.name))
        now_ms = int(self._clock.now().timestamp() * 1000)
        return Cursor(str(spec.name), baseline=Baseline(max(now_ms - self._margin_ms, 0)))

    async def _missed(
        self, spec: ContentTypeSpec, passes: list[bool], listed: int, end: str
    ) -> bool:
        """Whether the finished first listing, whose last cursor is `end`, may have missed
        objects (`whole.missed_why`); if so, says so and how it is listed again."""
        state = Cursor.decode(end, spec.name)
        why = await missed_why(self._listing, spec, passes, listed, state.drifted, state.baseline)
        if why is None:
            return False
        how = "by creation time" if spec.created_keyset else "from the start"
        missed = f"the {spec.name} listing may have missed objects ({why})"
        log.info("portal %s: %s; listing again %s", self.portal_id, missed, how)
        return True

    async def confirm(
        self,
        content_type: str,
        hubspot_ids: Sequence[str],
        *,
        states: tuple[bool, ...] | None = None,
    ) -> Confirmation:
        """Ask HubSpot about objects by id (as stored; HubDB rows '<table>:<row>'): which it
        still holds (live or archived, as records) and which it answers 404 for (`confirm`;
        `states`: only there)."""
        return await self._confirmer.confirm(content_type, hubspot_ids, states=states)

    def writer(self) -> Writer:
        """The portal's write path (`writes.Writer`), over this client's one transport and
        budget: never retried, a lost answer raised as `WriteOutcomeUnknown`."""
        return self._writer

    def spec(self, content_type: str) -> ContentTypeSpec:
        """The registered spec of `content_type`."""
        return self._registry.get(content_type)

    async def open_changes(
        self,
        content_type: str,
        since_ms: int,
        *,
        parent_id: str | None = None,
        stored_live: int | None = None,
        stored_among: StoredAmong | None = None,
    ) -> Opening:
        """The first answer of each pass of a change listing and how many objects changed
        after `since_ms` (epoch milliseconds), when HubSpot says; the archived pass not asked
        when the live one shows that nothing left it (`Changes.open_changes`)."""
        return await self._changes.open_changes(
            content_type,
            since_ms,
            parent_id=parent_id,
            stored_live=stored_live,
            stored_among=stored_among,
        )

    def changed_pages(
        self,
        content_type: str,
        since_ms: int,
        cursor: str | None = None,
        *,
        parent_id: str | None = None,
        opening: Opening | None = None,
    ) -> AsyncGenerator[Page, None]:
        """The pages of objects updated after `since_ms`, live then archived, from `cursor`;
        of one parent's children with `parent_id` (`Changes.changed_pages`)."""
        return self._changes.changed_pages(
            content_type, since_ms, cursor, parent_id=parent_id, opening=opening
        )

    def listed_ids(
        self, content_type: str, *, archived: bool, parent_id: str | None = None
    ) -> AsyncIterator[list[str]]:
        """Every id of one pass of a listing, a page at a time (`Windows.listed_ids`)."""
        return self._windows.listed_ids(content_type, archived=archived, parent_id=parent_id)

    async def window(
        self, content_type: str, *, archived: bool, start_ms: int | None, end_ms: int | None
    ) -> WindowAnswer:
        """HubSpot's count of the objects created in `[start_ms, end_ms)`, with their ids when
        one page holds them (`Windows.window`)."""
        return await self._windows.window(
            content_type, archived=archived, start_ms=start_ms, end_ms=end_ms
        )

    async def window_ids(
        self,
        content_type: str,
        *,
        archived: bool,
        start_ms: int | None,
        end_ms: int | None,
        opened: WindowAnswer | None = None,
    ) -> list[str]:
        """Every id of the objects created in `[start_ms, end_ms)`, from the second page when
        `opened` (the window's count) has the first (`Windows.window_ids`)."""
        return await self._windows.window_ids(
            content_type, archived=archived, start_ms=start_ms, end_ms=end_ms, opened=opened
        )

    async def confirm_in(
        self, content_type: str, hubspot_ids: Sequence[str], *, archived: bool
    ) -> Confirmation:
        """Ask about objects by id in one state only (`Windows.confirm_in`)."""
        return await self._windows.confirm_in(content_type, hubspot_ids, archived=archived)

    def listed_parents(self, content_type: str, opening: Opening) -> list[ParentState] | None:
        """The live objects of a parent type as its child reads them, when the opening of its
        change listing held them all (`parents.listed_parents`); else None."""
        return listed_parents(self._registry, content_type, opening)

    async def parent_states(self, content_type: str) -> list[ParentState]:
        """The live parents of a child type (HubDB tables of rows), with when each last changed
        and how many children it counts: one listing of the parents."""
        spec = self._registry.get(content_type)
        return parent_states(spec, await self._listing.parent_records(spec))


async def verify_portal_token(
    portal_id: int,
    token: SecretStr | str,
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> AccountDetails:
    """Ask HubSpot whether `token` belongs to portal `portal_id` (see `verify_portal`), with a
    budget of its own and few retries: someone is waiting for the answer."""
    async with HubSpotClient(
        portal_id,
        token,
        settings,
        RateLimitRegistry(),
        retry=_VERIFY_RETRY,
        transport=transport,
    ) as client:
        return await client.verify_portal()
