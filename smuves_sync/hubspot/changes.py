"""The listings of an incremental fetch: what changed since a moment, changed parents (the ids
only listings are `windows.Windows`'s).

    opening = await client.open_changes("site_page", since_ms)   # opening.changed: the total
    async for page in client.changed_pages("site_page", since_ms, cursor, opening=opening):
        store(page.items); checkpoint(page.cursor)      # page.counted: HubSpot's count
    tables = await client.parent_states("hubdb_row")   # each live table, its updatedAt

`Changes` holds these listings, built by `HubSpotClient` beside its `Listing` and `Confirmer`
(their requests go through its `Transport`); the client's methods of the same names call it.

`changed_pages` reads each pass (live, then archived) newest first (`sort=-updatedAt`): one
request answers the pass's count (`total`) and, when fewer objects than a page changed, every
change. When more changed, the next pages ask for what was updated before the oldest it has
(`updatedBefore`, a keyset): no deletion made while it runs can shift what is still to come,
and an object edited meanwhile moves out of reach but is dated after the listing began, so the
next fetch reads it. An answer that is not newest first (an API that ignores the sort) is
listed oldest first by `updatedAfter` instead. A HubDB table's rows take `sort` but no change
filters: they are paged by `paging.next` newest first until the listing reaches the moment.
Cursors resume after the last page, like a full listing's (`Cursor`). A type with an archive
filter (`ContentTypeSpec.archive_filter`) has its archived pass ask for what was archived after
the moment instead (`archivedAt__gt`), following `paging.next`; its `total` counts those.

`open_changes` asks those first requests of every pass before anything is stored, so that the
job knows how many objects it will read: a first answer that reaches back to the moment lists
every change of its pass; otherwise one ``limit=1`` request with `updatedAfter` counts them
(a HubDB table's rows cannot be counted so: their count stays unknown). `changed_pages` then
reads each first answer as its pass's first page instead of asking again.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import replace

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.lanes import Lane
from smuves_sync.hubspot.listing import Page, PortalReader, announces_next, results_of
from smuves_sync.hubspot.opening import (
    Answer,
    Opening,
    StoredAmong,
    changed_on,
    count_value,
    newest_first_order,
    nothing_left,
    second_page,
    update_ms,
)
from smuves_sync.hubspot.paging import ForwardPaging, PagingError, Position, iso_ms

log = logging.getLogger(__name__)


def _after_pass(spec: ContentTypeSpec, archived: bool, passes: list[bool]) -> Cursor:
    """The cursor once a pass is finished: the next pass, or done."""
    if archived is not passes[-1]:
        return Cursor(spec.name, archived=True)
    return Cursor(spec.name, archived, done=True)


def _archived_since(spec: ContentTypeSpec, since_ms: int) -> dict[str, str]:
    """A page of what was archived after `since_ms` (a type with an archive filter)."""
    return {"limit": str(spec.page_size), f"{spec.archive_filter}__gt": iso_ms(since_ms)}


class Changes(PortalReader):
    """The listings of an incremental fetch of one portal's content types."""

    async def open_changes(
        self,
        content_type: str,
        since_ms: int,
        *,
        parent_id: str | None = None,
        stored_live: int | None = None,
        stored_among: StoredAmong | None = None,
    ) -> Opening:
        """Ask each pass its first page (the requests `changed_pages` starts with) and count what
        changed: the page's changed objects when it reaches back to `since_ms`, else HubSpot's
        count of the objects updated after it (``limit=1``: one request more, made only when more
        than a page changed). With `stored_live` (the live objects stored): when the live pass
        lists no change and counts exactly that many, no live object left it (an archived one
        would have), and the archived pass is not asked (`Opening.skipped`). With `stored_among`
        too (how many of some ids are stored live), a type whose archiving moves `updated` skips
        it likewise when the live pass's first answer lists every change and counts what is
        stored live plus the changes not stored live (`opening.nothing_left`)."""
        spec = self._registry.get(content_type)
        path = spec.list_path(self._api_version, parent_id)
        passes = [False, True] if spec.archived_pass else [False]
        answers: dict[bool, Answer] = {}
        seconds: dict[bool, tuple[Position, Answer]] = {}
        costs: dict[bool, int] = {}
        changed: int | None = 0
        lane = self._transport.lane(len(passes))
        try:
            for archived in passes:
                if archived and stored_live is not None:
                    whole = changed is not None and False not in seconds
                    left = await nothing_left(
                        spec,
                        answers[False],
                        changed if whole else None,
                        since_ms,
                        parent_id,
                        stored_live,
                        stored_among,
                    )
                    if left:
                        return Opening(answers, changed, costs, skipped=True)
                before = self._transport.requests
                by_archive = archived and spec.archive_filter is not None
                params = {"limit": str(spec.page_size), "sort": "-updatedAt"}
                params = _archived_since(spec, since_ms) if by_archive else params
                answers[archived] = await self._get_page(spec, path, params, archived, lane)
                if by_archive:
                    found = count_value(answers[archived][0].get("total"))
                else:
                    found = changed_on(spec, answers[archived], archived, since_ms, parent_id)
                if found is None and spec.change_filters and not by_archive:
                    found = await self._count_past(
                        spec, path, answers[archived], archived, since_ms, lane, seconds
                    )
                changed = None if found is None or changed is None else changed + found
                costs[archived] = self._transport.requests - before
        finally:
            lane.close()
        return Opening(answers, changed, costs, seconds=seconds)

    async def _count_past(
        self,
        spec: ContentTypeSpec,
        path: str,
        first: Answer,
        archived: bool,
        since_ms: int,
        lane: Lane,
        seconds: dict[bool, tuple[Position, Answer]],
    ) -> int | None:
        """How many objects of a pass changed when its first answer holds only the newest: its
        second page asked with `updatedAfter` too (its `total` counts the rest; kept in
        `seconds` for the listing to read), or a ``limit=1`` count when the answer is not
        newest first."""
        second = second_page(spec, first, archived, since_ms, None)
        if second is None:
            params = {"limit": "1", **Position(updated_after=since_ms).query()}
            body, _, _ = await self._get_page(spec, path, params, archived, lane)
            return count_value(body.get("total"))
        position, newer = second
        params = {"limit": str(spec.page_size), "sort": "-updatedAt", **position.query()}
        params.update(Position(updated_after=since_ms).query())
        answer = await self._get_page(spec, path, params, archived, lane)
        seconds[archived] = (position, answer)
        rest = count_value(answer[0].get("total"))
        return None if rest is None else newer + rest

    async def changed_pages(
        self,
        content_type: str,
        since_ms: int,
        cursor: str | None = None,
        *,
        parent_id: str | None = None,
        opening: Opening | None = None,
    ) -> AsyncGenerator[Page, None]:
        """The pages of objects updated after `since_ms` (live, then archived), from `cursor`; of
        one parent's children (a HubDB table's rows) with `parent_id`. A pass that starts from its
        beginning takes its first answer from `opening` when it has it (`open_changes`)."""
        spec = self._registry.get(content_type)
        state = Cursor.decode(cursor, spec.name) if cursor else Cursor(str(spec.name))
        if state.done:
            return
        passes = [False, True] if spec.archived_pass else [False]
        lane = self._transport.lane(len(passes))
        answers = opening.answers if opening is not None else {}
        if opening is not None and opening.skipped:
            passes = [False]
        try:
            for archived in passes:
                if state.archived and not archived:
                    continue
                resuming = state.archived == archived
                start = state.position if resuming else Position()
                counted = state.part_total if resuming else None
                first = answers.get(archived) if start == Position() else None
                asked = {Position(): first} if first is not None else {}
                if first is not None and opening is not None and archived in opening.seconds:
                    at, answer = opening.seconds[archived]
                    asked[at] = answer
                if archived and spec.archive_filter is not None:
                    walk = self._archived_pages(spec, since_ms, start, lane, first)
                else:
                    walk = self._newest_first(
                        spec, archived, since_ms, start, counted, lane, parent_id, asked
                    )
                async for page in walk:
                    if not page.cursor:
                        after = _after_pass(spec, archived, passes).encode()
                        page = replace(page, cursor=after)
                    yield page
        finally:
            lane.close()

    async def _newest_first(
        self,
        spec: ContentTypeSpec,
        archived: bool,
        since_ms: int,
        position: Position,
        counted: int | None,
        lane: Lane,
        parent_id: str | None,
        asked: dict[Position, Answer] | None = None,
    ) -> AsyncIterator[Page]:
        """One pass newest first (`sort=-updatedAt`) until it reaches `since_ms`; its pages the
        opening asked already are `asked`, by position. The first page is unfiltered, its
        `total` the pass's count. The next pages ask for what was updated before the oldest the
        listing has (plus a millisecond: what shares it comes again) where the type takes change
        filters, else follow `paging.next`. An answer not newest first is listed again by
        `updatedAfter` (or, without filters, read whole). The last page's cursor is ""."""
        if position.updated_after is not None:  # resumed in the oldest-first listing
            since_ms = position.updated_after
            async for page in self._updated_keyset(spec, archived, since_ms, counted, lane):
                yield page
            return
        path = spec.list_path(self._api_version, parent_id)
        paging = ForwardPaging(position)
        whole = False
        while True:
            params = {"limit": str(spec.page_size), "sort": "-updatedAt", **position.query()}
            known = (asked or {}).pop(position, None)
            if known is None:
                known = await self._get_page(spec, path, params, archived, lane)
            body, results, more = known
            try:
                nxt = None if spec.change_filters else paging.advance(body, len(results))
            except (ValueError, PagingError) as exc:
                raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
            records, rejects = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
            if position == Position():
                counted = count_value(body.get("total"))
            times = [update_ms(record) for record in records]
            if not whole and not newest_first_order(times):
                if spec.change_filters:
                    log.warning("GET %s: not newest first; listing by updatedAfter instead", path)
                    async for page in self._updated_keyset(spec, archived, since_ms, counted, lane):
                        yield page
                    return
                log.warning("GET %s: not newest first; reading it whole", path)
                whole = True
            changed = tuple(
                r
                for r, ms in zip(records, times, strict=True)
                if whole or ms is None or ms > since_ms
            )
            oldest = min((ms for ms in times if ms is not None), default=since_ms)
            if not more or (not whole and oldest <= since_ms):
                yield Page(changed, "", archived, rejects=rejects, counted=counted)
                return
            position = nxt or self._before(spec, path, len(records), oldest, position)
            after = Cursor(spec.name, archived, position, parent=parent_id, part_total=counted)
            yield Page(changed, after.encode(), archived, rejects=rejects, counted=counted)

    async def _archived_pages(
        self,
        spec: ContentTypeSpec,
        since_ms: int,
        position: Position,
        lane: Lane,
        first: Answer | None,
    ) -> AsyncIterator[Page]:
        """The archived pass of a type with an archive filter: what was archived after
        `since_ms`, following `paging.next`; its pages count nothing. The last cursor is ""."""
        path = spec.list_path(self._api_version)
        paging = ForwardPaging(position)
        while True:
            if first is None:
                params = {**_archived_since(spec, since_ms), **position.query()}
                body, results, _ = await self._get_page(spec, path, params, True, lane)
            else:
                (body, results, _), first = first, None
            try:
                nxt = paging.advance(body, len(results))
            except (ValueError, PagingError) as exc:
                raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
            records, rejects = spec.read_page(results, archived_pass=True)
            if nxt is None:
                yield Page(records, "", True, rejects=rejects)
                return
            position = nxt
            yield Page(records, Cursor(spec.name, True, position).encode(), True, rejects=rejects)

    async def _get_page(
        self,
        spec: ContentTypeSpec,
        path: str,
        params: dict[str, str],
        archived: bool,
        lane: Lane,
    ) -> Answer:
        """One page of a listing (of the archived pass if asked): its body, its results and
        whether it announces another page."""
        if archived:
            params = {**params, "archived": "true"}
        body = await self._transport.get(spec.name, path, params, lane)
        try:
            return body, results_of(body, int(params["limit"])), announces_next(body)
        except ValueError as exc:
            raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None

    def _before(
        self,
        spec: ContentTypeSpec,
        path: str,
        count: int,
        oldest: int,
        position: Position,
    ) -> Position:
        """The next page of a newest-first keyset: what was updated before the oldest the listing
        has, plus a millisecond (what shares it comes again and costs nothing)."""
        before = oldest + 1
        if position.updated_before is not None and before >= position.updated_before:
            # A whole page updated within one millisecond: step past it.
            log.warning("%d %s objects share the update time %d ms", count, spec.name, oldest)
            before = oldest
            if before >= position.updated_before:
                raise self._transport.malformed(spec.name, f"GET {path}: the listing does not move")
        return Position(updated_before=before)

    async def _updated_keyset(
        self,
        spec: ContentTypeSpec,
        archived: bool,
        boundary: int,
        counted: int | None,
        lane: Lane,
    ) -> AsyncIterator[Page]:
        """Objects updated after `boundary`, oldest first, each page asking from the newest it has
        (less a millisecond, so that what shares it is not skipped). The last page's cursor is ""
        (the caller names the next pass)."""
        path = spec.list_path(self._api_version)
        while True:
            params = {"limit": str(spec.page_size), "sort": "updatedAt"}
            params.update(Position(updated_after=boundary).query())
            _, results, more = await self._get_page(spec, path, params, archived, lane)
            records, rejects = spec.read_page(results, archived_pass=archived)
            times = [ms for ms in map(update_ms, records) if ms is not None]
            if records and len(times) < len(records):
                raise self._transport.malformed(
                    spec.name, f"GET {path}: an object has no update time"
                )
            if not (records and more):
                yield Page(records, "", archived, rejects=rejects, counted=counted)
                return
            step = max(times) - 1
            if step <= boundary:
                # A whole page updated within one millisecond: step past it (the next full read
                # catches what it hides).
                log.warning(
                    "%d %s objects share the update time %d ms", len(records), spec.name, step
                )
                step += 1
            if step <= boundary:
                raise self._transport.malformed(spec.name, f"GET {path}: the listing does not move")
            boundary = step
            after = Cursor(
                spec.name, archived, Position(updated_after=boundary), part_total=counted
            )
            yield Page(records, after.encode(), archived, rejects=rejects, counted=counted)
