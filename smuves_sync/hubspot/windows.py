"""Ids-only listings: every id of a pass (`listed_ids`), and creation-time windows of one — how
many objects HubSpot holds created within one, and their ids when they fit on one page; and
asking by id in one listing only.

    async for ids in client.listed_ids("site_page", archived=False):
        ...                 # every id of the pass, nothing else
    answer = await client.window("site_page", archived=False, start_ms=a, end_ms=b)
    answer.total        # HubSpot's count of the objects created in [a, b)
    answer.ids          # their ids, when one page held them all; else None

A window is half-open, `[start_ms, end_ms)` in epoch milliseconds, either end open (None):
`createdAfter=<start - 1 ms>` and `createdBefore=<end>`, which HubSpot reads as strictly after
and strictly before. Each request asks for a whole page (`limit` = the type's page size) of ids
only (`property`), not `limit=1`: it costs the same request, and a window that holds no more
than a page is then listed by the request that counts it.

`confirm_in` asks about objects by id in one state only (live or archived) where the caller
has already seen that they are not in the other's listing: one batch read per 100 ids instead
of two (types without a batch read: `GET …/<id>` in that state).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace

from smuves_sync.content_fields import ContentRecord, RejectedObject, usable_id
from smuves_sync.errors import HubSpotNotFound
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE, Confirmation
from smuves_sync.hubspot.listing import PortalReader, announces_next, results_of
from smuves_sync.hubspot.paging import ForwardPaging, PagingError, Position, iso_ms


@dataclass(frozen=True, slots=True)
class WindowAnswer:
    """HubSpot's count of a creation-time window, and its ids when one page held them all;
    else the ids its first page showed and where its second starts (`window_ids` goes on from
    there instead of asking the first page again)."""

    total: int
    ids: tuple[str, ...] | None
    first: tuple[str, ...] = ()
    after: Position | None = None


def _own(raw: object, id_field: str) -> str | None:
    own = raw.get(id_field) if isinstance(raw, Mapping) else None
    if isinstance(own, int) and not isinstance(own, bool):
        own = str(own)
    return own if isinstance(own, str) and own and usable_id(own) is None else None


class Windows(PortalReader):
    """Counts and ids of creation-time windows of one portal's flat content types."""

    async def window(
        self, content_type: str, *, archived: bool, start_ms: int | None, end_ms: int | None
    ) -> WindowAnswer:
        """HubSpot's count of the objects created in `[start_ms, end_ms)` (the archived pass if
        asked), with their ids when they fit on one page."""
        spec = self._registry.get(content_type)
        path = spec.list_path(self._api_version)
        params = self._params(spec.page_size, spec.id_field, archived, start_ms, end_ms)
        body = await self._transport.get(spec.name, path, params)
        try:
            results = results_of(body, spec.page_size)
            more = announces_next(body)
            after = ForwardPaging().advance(body, len(results))
        except (ValueError, PagingError) as exc:
            raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
        total = body.get("total")
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise self._transport.malformed(spec.name, f"GET {path}: no count (total)")
        ids = [_own(raw, spec.id_field) for raw in results]
        first = tuple(own for own in ids if own is not None)
        if more or len(results) != total or len(first) != len(ids):
            # Not all of it on one page (or an object without a usable id: counted only).
            return WindowAnswer(total, None, first, after)
        return WindowAnswer(total, first, first)

    async def listed_ids(
        self, content_type: str, *, archived: bool, parent_id: str | None = None
    ) -> AsyncIterator[list[str]]:
        """Every id of one pass of a listing (as stored: HubDB rows '<table>:<row>'), a page at a
        time, asking HubSpot for the id field alone (`property`) where the type takes it."""
        spec = self._registry.get(content_type)
        path = spec.list_path(self._api_version, parent_id)
        paging = ForwardPaging()
        position = Position()
        prefix = f"{parent_id}:" if parent_id is not None else ""
        while True:
            params = {"limit": str(spec.page_size), "property": spec.id_field, **position.query()}
            if archived:
                params["archived"] = "true"
            body = await self._transport.get(spec.name, path, params)
            try:
                results = results_of(body, spec.page_size)
                nxt = paging.advance(body, len(results))
            except (ValueError, PagingError) as exc:
                raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
            ids: list[str] = []
            for raw in results:
                own = raw.get(spec.id_field) if isinstance(raw, Mapping) else None
                if isinstance(own, int) and not isinstance(own, bool):
                    own = str(own)
                if isinstance(own, str) and own and usable_id(own) is None:
                    ids.append(prefix + own)
            yield ids
            if nxt is None:
                return
            position = nxt

    async def window_ids(
        self,
        content_type: str,
        *,
        archived: bool,
        start_ms: int | None,
        end_ms: int | None,
        opened: WindowAnswer | None = None,
    ) -> list[str]:
        """Every id of the objects created in `[start_ms, end_ms)`, page after page; from the
        second page on when `opened` (the window's count, asked with the same query) has the
        first."""
        spec = self._registry.get(content_type)
        path = spec.list_path(self._api_version)
        params = self._params(spec.page_size, spec.id_field, archived, start_ms, end_ms)
        position = Position()
        ids: list[str] = []
        if opened is not None and opened.after is not None:
            position, ids = opened.after, list(opened.first)
        paging = ForwardPaging(position)
        while True:
            body = await self._transport.get(spec.name, path, {**params, **position.query()})
            try:
                results = results_of(body, spec.page_size)
                nxt = paging.advance(body, len(results))
            except (ValueError, PagingError) as exc:
                raise self._transport.malformed(spec.name, f"GET {path}: {exc}") from None
            ids += [own for own in (_own(raw, spec.id_field) for raw in results) if own]
            if nxt is None:
                return ids
            position = nxt

    @staticmethod
    def _params(
        page_size: int, id_field: str, archived: bool, start_ms: int | None, end_ms: int | None
    ) -> dict[str, str]:
        params = {"limit": str(page_size), "property": id_field}
        if start_ms is not None:
            params["createdAfter"] = iso_ms(start_ms - 1)
        if end_ms is not None:
            params["createdBefore"] = iso_ms(end_ms)
        if archived:
            params["archived"] = "true"
        return params

    async def confirm_in(
        self, content_type: str, hubspot_ids: Sequence[str], *, archived: bool
    ) -> Confirmation:
        """Which of the objects HubSpot holds in one state (live, or archived): a batch read of
        that state where the type has one, else `GET …/<id>` in it; what it does not return
        is gone (the caller has seen that the other state's listing does not hold them)."""
        spec = self._registry.get(content_type)
        present: list[ContentRecord] = []
        rejects: list[RejectedObject] = []
        held: set[str] = set()
        todo = list(hubspot_ids)
        if spec.batch_read:
            path = f"{spec.list_path(self._api_version)}/batch/read"
            params = {"archived": "true"} if archived else {}
            try:
                for start in range(0, len(todo), BATCH_READ_SIZE):
                    chunk = todo[start : start + BATCH_READ_SIZE]
                    body = await self._transport.post(spec.name, path, params, {"inputs": chunk})
                    try:
                        results = results_of(body, len(chunk))
                    except ValueError as exc:
                        raise self._transport.malformed(spec.name, f"POST {path}: {exc}") from None
                    found, unread = spec.read_page(results, archived_pass=archived)
                    if any(reject.hubspot_id is None for reject in unread):
                        held.update(chunk)  # which one it is cannot be told: none is surely gone
                    present += [record for record in found if record.hubspot_id in chunk]
                    rejects += [r for r in unread if r.hubspot_id in chunk]
                    held.update(record.hubspot_id for record in found)
                    held.update(r.hubspot_id for r in unread if r.hubspot_id is not None)
                todo = []
            except HubSpotNotFound:  # no batch read here after all: asked one by one
                todo = [hubspot_id for hubspot_id in todo if hubspot_id not in held]
        for hubspot_id in todo:
            path = spec.object_path(self._api_version, hubspot_id)
            try:
                body = await self._transport.get(
                    spec.name, path, {"archived": "true" if archived else "false"}
                )
            except HubSpotNotFound:
                continue
            held.add(hubspot_id)
            found, unread = spec.read_page([body], archived_pass=archived)
            present += found
            rejects += [r if r.hubspot_id else replace(r, hubspot_id=hubspot_id) for r in unread]
        gone = tuple(hubspot_id for hubspot_id in hubspot_ids if hubspot_id not in held)
        return Confirmation(tuple(present), gone, (), tuple(rejects))
