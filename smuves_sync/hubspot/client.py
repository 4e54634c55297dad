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
is checked at its end (counted again; HubSpot's offsets move under deletions) and, when it
may have missed objects, completed by another pass whose pages follow. `confirm` asks about
objects by id (batch reads, else one by one): which HubSpot still holds, which are gone.

A listing is one request chain
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
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo
from types import TracebackType
from typing import Any, TypeGuard

import httpx
from pydantic import SecretStr

from smuves_sync import metrics
from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotDailyLimitReached,
    HubSpotError,
    HubSpotNotFound,
    HubSpotRateLimited,
    HubSpotRetryableError,
    MalformedResponse,
    ResponseTooLarge,
    RunawayListing,
    TokenPortalMismatch,
    TokenRejected,
)
from smuves_sync.hubspot.account import AccountDetails, account_details_path, token_shape
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
# Ids per batch read: HubSpot's batch endpoints take up to 100 inputs.
BATCH_READ_SIZE = 100
# What the account-details request is called in errors and logs (it is no content type).
_ACCOUNT = "account_info"
# Connecting a portal waits on HubSpot's answer: a transient failure is tried once more, then
# the person connecting is told to try again.
_VERIFY_RETRY = RetryPolicy(max_attempts=2, initial_backoff_seconds=0.5, max_rate_limit_waits=2)


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing and the cursor that resumes right after it; `drifted` once a
    page of the listing reported another total than its part's first page did; `rejects`
    are the objects of the page that could not be read (kept aside, not fatal)."""

    items: tuple[ContentRecord, ...]
    cursor: str
    archived: bool = False
    drifted: bool = False
    rejects: tuple[RejectedObject, ...] = ()
    # HubSpot's count of the page's pass (live or archived), when the listing learnt it.
    counted: int | None = None

    @property
    def objects(self) -> int:
        """How many objects the page lists: an object listed twice counts once, and every
        object that could not be read counts too."""
        ids = {item.hubspot_id for item in self.items}
        return len(ids) + sum(1 for r in self.rejects if r.hubspot_id not in ids)


@dataclass(frozen=True, slots=True)
class Confirmation:
    """What HubSpot answered about objects asked for by id (`HubSpotClient.confirm`)."""

    present: tuple[ContentRecord, ...]  # held, live or archived, as HubSpot has them now
    gone: tuple[str, ...]  # 404 however asked: deleted
    unknown: tuple[str, ...]  # the type offers no way to ask
    # held, but answered in a shape that cannot be read (set aside as a page's are)
    rejects: tuple[RejectedObject, ...] = ()


@dataclass(frozen=True, slots=True)
class _BatchAnswer:
    """What one batch read answered, by own id (HubDB rows: without the table)."""

    records: tuple[ContentRecord, ...]
    rejects: tuple[RejectedObject, ...]
    # the ids it answered with an object (readable or not)
    held: frozenset[str]
    # the ids it did not answer in a request whose answer held an object without a usable
    # id: that object may be any of them, so none of them is confirmed gone
    unsure: frozenset[str]


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
        # Requests sent (each attempt counts): what a fetch reports it cost.
        self.requests = 0
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

    async def account_details(self) -> AccountDetails:
        """HubSpot's details of the account the token belongs to (its portal, its time zone)."""
        path = account_details_path(self._api_version)
        body = await self._get(_ACCOUNT, path, {})
        try:
            return AccountDetails.from_body(body)
        except ValueError as exc:
            raise self._malformed(_ACCOUNT, f"GET {path}: {exc}") from None

    async def verify_portal(self) -> AccountDetails:
        """The account details, once HubSpot has said the token belongs to this client's
        portal: `TokenPortalMismatch` when it belongs to another, `TokenRejected` when HubSpot
        refuses it (401, 403). Other failures raise as any request's would."""
        if not token_shape(self._token.get_secret_value()):
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
        produces now) and no page reported a total other than its part's first page did, a
        second pass follows — by creation time (`createdAfter`, which no deletion shifts)
        where the type supports it, else a listing from the start — and its pages come next,
        cursors and all. A `cursor` from a finished listing whose check has not run yet (the
        job stopped in between) runs the check again.
        """
        spec = self._registry.get(content_type)
        state = Cursor.decode(cursor, spec.name) if cursor else Cursor(str(spec.name))
        if state.done and (state.recheck or not verify):
            return
        passes = [False, True] if include_archived and spec.archived_pass else [False]
        lane = self._budget.lane(_requests_for(expected, spec.page_size))
        try:
            if not state.recheck:
                drifted = state.drifted
                if not state.done:
                    bound = ListingBound(spec.page_size, expected)
                    walk = self._offset_pages(spec, state, passes, lane, bound, expected)
                    async for page in walk:
                        listed += page.objects
                        drifted = page.drifted
                        yield page
                if not verify or await self._listing_whole(spec, passes, listed, drifted):
                    return
                log.info(
                    "portal %s: the %s listing may have missed objects (%s); listing again %s",
                    self.portal_id,
                    spec.name,
                    "its totals moved while it ran" if drifted else f"{listed:,} listed",
                    "by creation time" if spec.created_keyset else "from the start",
                )
                state = Cursor(str(spec.name), recheck=True)
            bound = ListingBound(spec.page_size)
            if spec.created_keyset:
                again = self._keyset_pages(spec, state, passes, lane, bound)
            else:
                again = self._offset_pages(spec, state, passes, lane, bound, None)
            async for page in again:
                yield page
        finally:
            lane.close()

    async def confirm(self, content_type: str, hubspot_ids: Sequence[str]) -> Confirmation:
        """Ask HubSpot about objects by id (as stored; HubDB rows '<table>:<row>'): which it
        still holds (live or archived, as records) and which it answers 404 for, archived
        or not (gone).

        Where the type has a batch read (`POST …/batch/read`): live, then `archived=true` for
        the rest; what neither returns is gone. HubDB's row batch read has no `archived`: a
        row it does not return is asked for by id with `archived=true`. A batch read that
        answers 404 as a whole says nothing about the ids (except that the rows of a table
        that is itself gone are gone): they are asked for one by one, `GET …/<id>`, live then
        archived, as are the objects of types without a batch read. An id of a type that
        offers neither is left `unknown`.
        """
        spec = self._registry.get(content_type)
        present: list[ContentRecord] = []
        rejects: list[RejectedObject] = []
        gone: list[str] = []
        unknown: list[str] = []
        groups: dict[str | None, list[str]] = {}
        every_state: tuple[bool, ...] = (False, True) if spec.archived_pass else (False,)
        for hubspot_id in hubspot_ids:
            parent, _, own = hubspot_id.rpartition(":") if spec.parent else ("", "", hubspot_id)
            groups.setdefault(parent or None, []).append(own)
        for parent_id, own_ids in groups.items():
            prefix = f"{parent_id}:" if parent_id is not None else ""
            todo = list(own_ids)
            # Which states (archived or not) still need asking by id.
            ask = every_state
            # Ids a batch read could not settle: asked by id in every state.
            unsure: list[str] = []
            if spec.batch_read:
                found = await self._batch_read(spec, parent_id, todo, archived=False)
                if found is None and spec.parent is not None:
                    if not await self._parent_exists(spec, parent_id):
                        gone.extend(prefix + own for own in todo)
                        continue
                elif found is not None:
                    present.extend(found.records)
                    rejects.extend(found.rejects)
                    unsure = [own for own in todo if own in found.unsure]
                    todo = [own for own in todo if own not in found.held | found.unsure]
                    ask = tuple(archived for archived in ask if archived)
                    if spec.parent is None and ask:
                        found = await self._batch_read(spec, parent_id, todo, archived=True)
                        if found is not None:
                            present.extend(found.records)
                            rejects.extend(found.rejects)
                            unsure += [own for own in todo if own in found.unsure]
                            settled = found.held | found.unsure
                            gone.extend(prefix + own for own in todo if own not in settled)
                            todo = []
            asks = [(own, ask) for own in todo] + [(own, every_state) for own in unsure]
            if not asks:
                continue
            if not spec.get_by_id:
                unknown.extend(prefix + own for own, _ in asks)
                continue
            for own, states in asks:
                answer = await self._get_one(spec, parent_id, own, states)
                if answer is None:
                    gone.append(prefix + own)
                elif isinstance(answer, RejectedObject):
                    rejects.append(answer)
                else:
                    present.append(answer)
        return Confirmation(tuple(present), tuple(gone), tuple(unknown), tuple(rejects))

    # -- listings -------------------------------------------------------------------------------

    async def _offset_pages(
        self,
        spec: ContentTypeSpec,
        state: Cursor,
        passes: list[bool],
        lane: Lane,
        bound: ListingBound,
        left: int | None,
    ) -> AsyncGenerator[Page, None]:
        """The pages of the cursor-paged listing (live pass, then archived; HubDB rows table
        by table), from `state` on; each page's cursor resumes right after it."""
        recheck = state.recheck
        parents: list[str | None] = [None]
        if spec.parent is not None:
            records = await self._parent_records(spec, lane)
            parents = [*sorted((p.hubspot_id for p in records), key=_id_key)]
        drifted = state.drifted
        for archived in passes:
            if state.archived and not archived:
                continue  # the live pass was finished before the cursor was saved
            resuming_pass = state.archived == archived
            todo = _from_saved_parent(parents, state) if resuming_pass else parents
            for index, parent_id in enumerate(todo):
                resuming = resuming_pass and parent_id == state.parent and not state.parent_done
                start = state.position if resuming else Position()
                part_total = state.part_total if resuming else None
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
                    if total is not None:
                        # Another total than the part's first page reported: objects came or
                        # went while the listing ran, and offsets may have moved under it.
                        drifted = drifted or (part_total is not None and total != part_total)
                        part_total = total if part_total is None else part_total
                    if left is not None:
                        left = max(left - listed, 0)
                        lane.expect(_requests_for(left, spec.page_size))
                    elif total is not None:
                        lane.expect(_requests_for(max(total - seen, 0), spec.page_size))
                    if nxt is not None:
                        after = Cursor(
                            spec.name, archived, nxt, parent=parent_id, part_total=part_total
                        )
                    elif index < len(todo) - 1:
                        after = Cursor(spec.name, archived, parent=parent_id, parent_done=True)
                    elif archived is not passes[-1]:
                        after = Cursor(spec.name, archived=True)
                    else:
                        after = Cursor(spec.name, archived, done=True)
                    after = replace(after, recheck=recheck, drifted=drifted)
                    yield Page(items, after.encode(), archived, drifted, rejects)

    async def _keyset_pages(
        self,
        spec: ContentTypeSpec,
        state: Cursor,
        passes: list[bool],
        lane: Lane,
        bound: ListingBound,
    ) -> AsyncGenerator[Page, None]:
        """The pages of a listing sorted by creation time, each asking for the objects created
        after the last one it has (`createdAfter`): a deletion cannot move what is still to
        come. The boundary is one millisecond before the newest creation time of the page,
        so that objects created in that same millisecond are not skipped (the one already
        seen comes again: storing it twice writes nothing)."""
        path = spec.list_path(self._api_version)
        for archived in passes:
            if state.archived and not archived:
                continue
            boundary = state.position.created_after if state.archived == archived else None
            first = True
            while True:
                params = {"limit": str(spec.page_size), "sort": "createdAt"}
                params.update(Position(created_after=boundary).query())
                if archived:
                    params["archived"] = "true"
                body = await self._get(spec.name, path, params, lane)
                try:
                    results = _results(body)
                    more = _announces_next(body)
                except ValueError as exc:  # no `results` list, or a `paging` of another shape
                    raise self._malformed(spec.name, f"GET {path}: {exc}") from None
                # As in the first pass, an object that cannot be read is set aside.
                records, rejects = spec.read_page(results, archived_pass=archived)
                try:
                    newest = max((spec.created_ms(record.raw) for record in records), default=0)
                except ValueError as exc:  # RecordError: a creation time to page by is missing
                    raise self._malformed(spec.name, f"GET {path}: {exc}") from None
                total = body.get("total")
                if first:
                    bound.part_started(total if _is_count(total) else None)
                    first = False
                if not bound.add(len(records) + len(rejects)):
                    raise RunawayListing(
                        f"the second {spec.name} listing does not end: {bound.describe()}",
                        portal_id=self.portal_id,
                        content_type=str(spec.name),
                    )
                if records and more:
                    step = newest - 1
                    if boundary is not None and step <= boundary:
                        # A whole page created within one millisecond: step past it (what it
                        # hides was stored before, or comes with the next fetch).
                        log.warning(
                            "portal %s: %d %s objects share the creation time %d ms",
                            self.portal_id,
                            len(records),
                            spec.name,
                            newest,
                        )
                        step = newest
                    boundary = step
                    after = Cursor(
                        spec.name, archived, Position(created_after=boundary), recheck=True
                    )
                elif archived is not passes[-1]:
                    after = Cursor(spec.name, archived=True, recheck=True)
                else:
                    after = Cursor(spec.name, archived, done=True, recheck=True)
                yield Page(records, after.encode(), archived, rejects=rejects)
                if not (records and more):
                    break

    async def _listing_whole(
        self, spec: ContentTypeSpec, passes: list[bool], listed: int, drifted: bool
    ) -> bool:
        """Whether a finished listing saw everything: its totals held still while it ran and
        it listed exactly as many objects as HubSpot counts now."""
        if drifted:
            return False
        counted = 0
        for archived in passes:
            counted += await self.count(spec.name, archived=archived)
        return counted == listed

    async def _batch_read(
        self, spec: ContentTypeSpec, parent_id: str | None, own_ids: list[str], archived: bool
    ) -> _BatchAnswer | None:
        """What a batch read answers about `own_ids`, 100 ids a request; None when it answers
        404 as a whole (no such endpoint, or no such parent). An object of the answer that
        cannot be read is set aside (`rejects`), as a listing's is."""
        records: dict[str, ContentRecord] = {}
        rejects: list[RejectedObject] = []
        held: set[str] = set()
        unsure: set[str] = set()
        path = f"{spec.list_path(self._api_version, parent_id)}/batch/read"
        params = {"archived": "true"} if archived else {}
        asked = set(own_ids)
        for start in range(0, len(own_ids), BATCH_READ_SIZE):
            chunk = own_ids[start : start + BATCH_READ_SIZE]
            try:
                body = await self._post(spec.name, path, params, {"inputs": chunk})
            except HubSpotNotFound:
                return None
            try:
                results = _results(body)
            except ValueError as exc:
                raise self._malformed(spec.name, f"POST {path}: {exc}") from None
            found, unread = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
            for record in found:
                own = _own_id(record.hubspot_id, parent_id)
                if own in asked:
                    records[own] = record
                    held.add(own)
            for reject in unread:
                if reject.hubspot_id is None:
                    # Which of the ids it is cannot be told: none of the rest is gone for sure.
                    unsure.update(chunk)
                    continue
                unread_id = _own_id(reject.hubspot_id, parent_id)
                if unread_id in asked:
                    rejects.append(reject)
                    held.add(unread_id)
            if unread:
                log.warning(
                    "portal %s: %d %s object(s) of POST %s cannot be read: %s",
                    self.portal_id,
                    len(unread),
                    spec.name,
                    path,
                    unread[0].reason,
                )
        return _BatchAnswer(
            tuple(records.values()), tuple(rejects), frozenset(held), frozenset(unsure - held)
        )

    async def _parent_exists(self, spec: ContentTypeSpec, parent_id: str | None) -> bool:
        """Whether the (live) parent of a child type's objects is there: a HubDB table."""
        assert spec.parent is not None and parent_id is not None
        parent = self._registry.get(spec.parent)
        try:
            await self._get(spec.name, parent.object_path(self._api_version, parent_id), {})
        except HubSpotNotFound:
            return False
        return True

    async def _get_one(
        self,
        spec: ContentTypeSpec,
        parent_id: str | None,
        own_id: str,
        states: tuple[bool, ...] = (False, True),
    ) -> ContentRecord | RejectedObject | None:
        """The object as HubSpot holds it, asked for live and/or archived (`states`, in that
        order); set aside when it cannot be read (as a listing's object is), under the id it
        was asked for if it names none; None when HubSpot answers 404 to each."""
        path = spec.object_path(self._api_version, own_id, parent_id)
        for archived in states:
            params = {"archived": "true" if archived else "false"}
            try:
                body = await self._get(spec.name, path, params)
            except HubSpotNotFound:
                continue
            records, unread = spec.read_page([body], parent_id=parent_id, archived_pass=archived)
            if records:
                return records[0]
            reject = unread[0]
            log.warning(
                "portal %s: the %s object of GET %s cannot be read: %s",
                self.portal_id,
                spec.name,
                path,
                reject.reason,
            )
            if reject.hubspot_id is None:
                asked = own_id if parent_id is None else f"{parent_id}:{own_id}"
                reject = replace(reject, hubspot_id=asked)
            return reject
        return None

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

    def spec(self, content_type: str) -> ContentTypeSpec:
        """The registered spec of `content_type`."""
        return self._registry.get(content_type)

    def path(self, spec: ContentTypeSpec, parent_id: str | None = None) -> str:
        """The list path of `spec` in this client's API version."""
        return spec.list_path(self._api_version, parent_id)

    async def get_json(
        self, asked: str, path: str, params: Mapping[str, str], lane: Lane | None = None
    ) -> dict[str, Any]:
        """GET `path` through the portal's budget and the retry policy: the JSON object."""
        return await self._get(asked, path, params, lane)

    def lane(self, requests: int) -> Lane:
        """A request chain of the portal's budget, expecting `requests` more requests."""
        return self._budget.lane(requests)

    async def parent_records(self, spec: ContentTypeSpec) -> list[ContentRecord]:
        """The live objects of a child type's parent type (HubDB tables of rows)."""
        return await self._parent_records(spec)

    async def child_pages(
        self, content_type: str, parent_id: str, *, archived: bool
    ) -> AsyncIterator[Page]:
        """Every page of one parent's children (a table's rows), one pass; the pages carry no
        cursor (a child listing is read whole or again)."""
        spec = self._registry.get(content_type)
        path = spec.list_path(self._api_version, parent_id)
        walk = self._walk(spec, path, archived, Position(), parent_id, spec.name)
        async for records, rejects, _, total in walk:
            yield Page(records, "", archived, rejects=rejects, counted=total)

    def malformed(self, asked: str, detail: str) -> MalformedResponse:
        """The error of an answer of the wrong shape."""
        return self._malformed(asked, detail)

    async def _get(
        self, asked: str, path: str, params: Mapping[str, str], lane: Lane | None = None
    ) -> dict[str, Any]:
        """GET `path` through the budget and the retry policy; the JSON object it answered."""

        async def send() -> dict[str, Any]:
            return await self._send_once(asked, path, params, lane)

        def on_rate_limited(exc: HubSpotRateLimited) -> float:
            return self._budget.rate_limited(exc.policy, exc.retry_after)

        return await self._retry.run(send, clock=self._clock, on_rate_limited=on_rate_limited)

    async def _post(
        self, asked: str, path: str, params: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """POST a JSON body that only reads (a batch read), through the budget and the retry
        policy, which may send it again; the JSON object answered (200 or 207)."""

        async def send() -> dict[str, Any]:
            return await self._send_once(asked, path, params, None, body)

        def on_rate_limited(exc: HubSpotRateLimited) -> float:
            return self._budget.rate_limited(exc.policy, exc.retry_after)

        return await self._retry.run(send, clock=self._clock, on_rate_limited=on_rate_limited)

    async def _send_once(
        self,
        asked: str,
        path: str,
        params: Mapping[str, str],
        lane: Lane | None,
        body: Mapping[str, Any] | None = None,
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
        self.requests += 1
        method = "GET" if body is None else "POST"
        request = f"{method} {path}"
        status: int | None = None
        try:
            async with self._http.stream(
                method, path, params=params, json=body, auth=self._auth
            ) as response:
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


def _announces_next(body: Mapping[str, Any]) -> bool:
    """Whether the body's `paging.next` says that more follows."""
    paging = body.get("paging")
    if paging is None:
        return False
    if not isinstance(paging, Mapping):
        raise ValueError(f"'paging' is {type(paging).__name__}, expected an object")
    return paging.get("next") is not None


def _own_id(hubspot_id: str, parent_id: str | None) -> str:
    """An object's own id from its stored one (HubDB rows: '<table>:<row>')."""
    prefix = f"{parent_id}:" if parent_id is not None else ""
    return hubspot_id.removeprefix(prefix)


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
