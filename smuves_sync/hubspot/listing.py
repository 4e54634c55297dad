"""Listing a content type page by page: the cursor-paged listing (live pass, then archived;
HubDB rows table by table), the keyset listing by creation time that completes one, and
counts (the check that a finished listing saw everything is `whole`'s). The pages' requests go
through a `Transport`; `HubSpotClient.pages` strings these together.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from smuves_sync.content_fields import ContentRecord, RejectedObject
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.errors import RunawayListing
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.lanes import Lane
from smuves_sync.hubspot.paging import ForwardPaging, ListingBound, Position
from smuves_sync.hubspot.registry import ContentTypeRegistry
from smuves_sync.hubspot.transport import Transport

log = logging.getLogger(__name__)


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


class PortalReader:
    """Reads one portal's content types through `transport` (the base of `Listing` and
    `Confirmer`)."""

    def __init__(
        self, transport: Transport, registry: ContentTypeRegistry, api_version: str
    ) -> None:
        self._transport = transport
        self._registry = registry
        self._api_version = api_version
        self.portal_id = transport.portal_id


class Listing(PortalReader):
    """The listings of one portal's content types."""

    async def count(self, content_type: str, *, archived: bool = False) -> int:
        """How many objects of `content_type` HubSpot holds (the archived ones if asked)."""
        spec = self._registry.get(content_type)
        if spec.parent is None:
            return await self._listing_total(spec.name, spec.list_path(self._api_version), archived)
        if archived and not spec.archived_pass:
            return 0
        parents = await self.parent_records(spec)
        # The parent's count field counts live children only.
        if archived or spec.parent_count_field is None:
            total = 0
            for parent in parents:
                path = spec.list_path(self._api_version, parent.hubspot_id)
                total += await self._listing_total(spec.name, path, archived)
            return total
        return sum(self._child_count(spec, parent) for parent in parents)

    async def created_since(self, spec: ContentTypeSpec, since: int, *, archived: bool) -> int:
        """How many objects of a type without a parent, created after `since` (epoch
        milliseconds), HubSpot holds (the archived ones if asked): `createdAfter`."""
        path = spec.list_path(self._api_version)
        return await self._listing_total(spec.name, path, archived, created_after=since)

    async def offset_pages(
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
            records = await self.parent_records(spec, lane)
            parents = [*sorted((p.hubspot_id for p in records), key=_id_key)]
        drifted, baseline = state.drifted, state.baseline
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
                async for items, rejects, nxt, total in self.walk(
                    spec, path, archived, start, parent_id, spec.name, lane
                ):
                    listed = len(items) + len(rejects)
                    if seen == 0:
                        bound.part_started(total)
                        if baseline and start == Position() and total is not None:
                            baseline = baseline.with_start(archived, total)  # the pass's count
                    if not bound.add(listed):
                        raise self._runaway(spec, bound)
                    seen += listed
                    if total is not None:
                        # Another total than the part's first page reported: objects came or
                        # went while the listing ran, and offsets may have moved under it.
                        drifted = drifted or (part_total is not None and total != part_total)
                        part_total = total if part_total is None else part_total
                    if left is not None:
                        left = max(left - listed, 0)
                        lane.expect(requests_for(left, spec.page_size))
                    elif total is not None:
                        lane.expect(requests_for(max(total - seen, 0), spec.page_size))
                    ends = (index == len(todo) - 1, archived is passes[-1])
                    after = _cursor_after(spec, archived, nxt, parent_id, part_total, *ends)
                    after = replace(after, recheck=recheck, drifted=drifted, baseline=baseline)
                    yield Page(items, after.encode(), archived, drifted, rejects)

    def _runaway(self, spec: ContentTypeSpec, bound: ListingBound) -> RunawayListing:
        return RunawayListing(
            f"the {spec.name} listing does not end: {bound.describe()}; HubSpot keeps handing "
            "out new cursors. The next fetch counts afresh and lists from the start",
            portal_id=self.portal_id,
            content_type=str(spec.name),
        )

    async def keyset_pages(
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
                body = await self._transport.get(spec.name, path, params, lane)
                records, rejects, more, newest = self._created_page(spec, path, body, archived)
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
                        shared = f"{len(records)} {spec.name} objects share the creation time"
                        log.warning("portal %s: %s %d ms", self.portal_id, shared, newest)
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

    def _created_page(
        self, spec: ContentTypeSpec, path: str, body: Mapping[str, Any], archived: bool
    ) -> tuple[tuple[ContentRecord, ...], tuple[RejectedObject, ...], bool, int]:
        """A page of the keyset listing by creation time: its records, what cannot be read (set
        aside, as in the first pass), whether more follows, the newest creation time."""
        try:
            results = results_of(body, spec.page_size)
            more = announces_next(body)
        except ValueError as exc:  # no `results` list, or a `paging` of another shape
            raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
        records, rejects = spec.read_page(results, archived_pass=archived)
        try:
            newest = max((spec.created_ms(record.raw) for record in records), default=0)
        except ValueError as exc:  # RecordError: a creation time to page by is missing
            raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
        return records, rejects, more, newest

    async def walk(
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
            body = await self._transport.get(asked, path, params, lane)
            try:
                results = results_of(body, spec.page_size)
                nxt = paging.advance(body, len(results))
            except ValueError as exc:  # PagingError, or no `results` list: the page is broken
                raise self._transport.malformed(asked, f"GET {path}: {exc}") from None
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

    async def parent_records(
        self, spec: ContentTypeSpec, lane: Lane | None = None
    ) -> list[ContentRecord]:
        """The live objects of a child type's parent type (HubDB tables of rows)."""
        assert spec.parent is not None
        parent = self._registry.get(spec.parent)
        path = parent.list_path(self._api_version)
        found: list[ContentRecord] = []
        # A parent that cannot be read has no children to list; its own type's fetch records it.
        async for records, _, _, _ in self.walk(
            parent, path, False, Position(), None, spec.name, lane
        ):
            found.extend(records)
        return found

    async def _listing_total(
        self, asked: str, path: str, archived: bool, *, created_after: int | None = None
    ) -> int:
        params = {"limit": "1", **Position(created_after=created_after).query()}
        if archived:
            params["archived"] = "true"
        body = await self._transport.get(asked, path, params)
        total = body.get("total")
        if not _is_count(total):
            raise self._transport.malformed(asked, f"GET {path}: 'total' is missing or not a count")
        return total

    def _child_count(self, spec: ContentTypeSpec, parent: ContentRecord) -> int:
        assert spec.parent_count_field is not None
        value = parent.raw.get(spec.parent_count_field)
        if not _is_count(value):
            raise self._transport.malformed(
                spec.name,
                f"{spec.parent} {parent.hubspot_id}: '{spec.parent_count_field}' is not a count",
            )
        return value


def _cursor_after(
    spec: ContentTypeSpec,
    archived: bool,
    nxt: Position | None,
    parent_id: str | None,
    part_total: int | None,
    last_part: bool,
    last_pass: bool,
) -> Cursor:
    """Where a cursor-paged listing resumes after a page: the next page of this part, the next
    part (parent), the archived pass, or done."""
    if nxt is not None:
        return Cursor(spec.name, archived, nxt, parent=parent_id, part_total=part_total)
    if not last_part:
        return Cursor(spec.name, archived, parent=parent_id, parent_done=True)
    if not last_pass:
        return Cursor(spec.name, archived=True)
    return Cursor(spec.name, archived, done=True)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def requests_for(objects: int | None, page_size: int) -> int:
    """Requests a listing needs for `objects` more objects (one if unknown: the least urgent)."""
    if objects is None:
        return 1
    # The closing request of each pass may come back with fewer objects, or none.
    return math.ceil(objects / page_size) + 1


def announces_next(body: Mapping[str, Any]) -> bool:
    """Whether the body's `paging.next` says that more follows."""
    paging = body.get("paging")
    if paging is None:
        return False
    if not isinstance(paging, Mapping):
        raise ValueError(f"'paging' is {type(paging).__name__}, expected an object")
    return paging.get("next") is not None


# A page may hold a few more results than the page size asked for: an object served twice in
# one page (read as one) takes it past the size. Twice the size is no such page: it is broken,
# and refusing it bounds the objects a page makes by the size asked for, not by its bytes.
_RESULTS_PER_PAGE_SIZE = 2


def results_of(body: Mapping[str, Any], page_size: int) -> list[Any]:
    """The body's `results`; ValueError when it is not a list or holds more than twice
    `page_size` (the page size asked for)."""
    results = body.get("results")
    if not isinstance(results, list):
        raise ValueError("'results' is missing or not a list")
    at_most = page_size * _RESULTS_PER_PAGE_SIZE
    if len(results) > at_most:
        raise ValueError(
            f"{len(results):,} results on a page of {page_size:,} (at most {at_most:,} are read)"
        )
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
