"""Listing queries: parse HubSpot's query parameters, order and filter slots, cut a page.

Cursors are opaque to clients (url-safe base64). Other orders and filters page by position, as
HubSpot's cursors do in every order: an object deleted between two requests moves every later
one a place forward, and the one that crosses the page boundary is never served. In the
default order (by creation, which is slot order) the fake's cursor names the last slot served
instead, so it stays valid when objects are added or deleted between two requests; a server
configured with `cursors="offset"` pages the default order by position too, as HubSpot does.
"""

from __future__ import annotations

import base64
import binascii
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.datastructures import QueryParams

from smuves_sync.testing.fake_hubspot.content import Builder
from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle
from smuves_sync.testing.fake_hubspot.spec import PoisonKind

_NATURAL_SORTS = {"", "createdAt", "created", "id", "createdBy", "updatedBy", "hs_id",
                  "hs_created_at"}  # fmt: skip
_UPDATED_SORTS = {"updatedAt", "updated", "hs_updated_at"}
_FILTERS = {
    "createdAfter": ("created", "gt"),
    "createdBefore": ("created", "lt"),
    "createdAt": ("created", "eq"),
    "updatedAfter": ("updated", "gt"),
    "updatedBefore": ("updated", "lt"),
    "updatedAt": ("updated", "eq"),
}
# The guides' filters on when an object was archived: `archivedAt__gt=<moment>` on pages and
# posts, `deletedAt__gt` on what carries `deletedAt` (authors, tags, blogs, tables). A live
# object's moment is the epoch. A filter on a field the type does not carry is ignored, as
# HubSpot ignores parameters it does not know.
_ARCHIVE_OPS = ("gt", "gte", "lt", "lte", "eq")
_ARCHIVE_FILTERS = {
    f"{field}__{op}": (field, op) for field in ("archivedAt", "deletedAt") for op in _ARCHIVE_OPS
}
_VIEW_CACHE_SIZE = 8


class BadRequest(Exception):
    """A query parameter HubSpot would refuse with a 400."""


@dataclass(frozen=True, slots=True)
class ListQuery:
    """The listing parameters a client sent, validated."""

    limit: int
    after: str | None = None
    offset: int | None = None
    archived: bool = False
    sort: str = ""
    filters: tuple[tuple[str, str, int], ...] = ()
    properties: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Selection:
    """One page of slots and how to ask for the next one."""

    total: int
    slots: list[int]
    next_after: str | None
    next_offset: int | None


def parse_query(
    params: QueryParams,
    *,
    max_limit: int,
    allow_offset: bool,
    property_param: str,
    time_filters: bool = True,
) -> ListQuery:
    """Validate the listing parameters; unknown parameters are ignored, as HubSpot does (a
    HubDB table's rows take no `createdAfter`, `updatedAfter`…: `time_filters=False`)."""
    limit = _int_param(params, "limit", default=max_limit)
    if limit < 1:
        raise BadRequest("limit must be a positive integer")
    offset = _int_param(params, "offset", default=-1) if allow_offset else -1
    if allow_offset and "offset" in params and offset < 0:
        raise BadRequest("offset must be a non-negative integer")
    archived_text = params.get("archived", "false").lower()
    if archived_text not in ("true", "false"):
        raise BadRequest("archived must be true or false")
    filters = tuple(
        (field, op, _moment_ms(params[name], name))
        for name, (field, op) in (_FILTERS | _ARCHIVE_FILTERS).items()
        if name in params and time_filters
    )
    properties = tuple(
        name for value in params.getlist(property_param) for name in value.split(",") if name
    )
    return ListQuery(
        limit=min(limit, max_limit),
        after=params.get("after") or None,
        offset=offset if offset >= 0 else None,
        archived=archived_text == "true",
        sort=params.get("sort", ""),
        filters=filters,
        properties=properties,
    )


def _int_param(params: QueryParams, name: str, *, default: int) -> int:
    text = params.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise BadRequest(f"{name} must be an integer") from None


def _moment_ms(text: str, name: str) -> int:
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{name} must be a date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def encode_cursor(mode: str, value: int) -> str:
    """An opaque `after` token."""
    return base64.urlsafe_b64encode(f"{mode}{value}".encode()).decode().rstrip("=")


def decode_cursor(token: str) -> tuple[str, int]:
    """Inverse of `encode_cursor`; a token this server never issued is a 400."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        mode, value = text[0], int(text[1:])
    except (binascii.Error, UnicodeDecodeError, ValueError, IndexError):
        raise BadRequest("the paging cursor is not valid") from None
    if mode not in "kdp" or value < 0:
        raise BadRequest("the paging cursor is not valid")
    return mode, value


class Collection:
    """A lifecycle with its builder: what one listing endpoint serves."""

    def __init__(self, life: Lifecycle, builder: Builder) -> None:
        self.life = life
        self.builder = builder
        # Slots served spoilt (poison.py), set by the portal from its spec.
        self.poisons: dict[int, PoisonKind] = {}
        self._views: OrderedDict[tuple[Any, ...], array[int]] = OrderedDict()
        self._views_version = -1

    def select(self, query: ListQuery, *, offsets: bool = False) -> Selection:
        """The page of slots a listing with these parameters returns (`offsets`: page the
        default order by position, as HubSpot does, rather than by the last slot served)."""
        ascending = self.life.live(archived=query.archived)
        mode, view = self._view(query, ascending)
        if offsets and mode == "k":
            mode = "p"
        total = len(view)
        start = query.offset if query.offset is not None else 0
        if query.after is not None and query.offset is None:
            cursor_mode, value = decode_cursor(query.after)
            if cursor_mode != mode:
                raise BadRequest("the paging cursor does not belong to this sort order")
            if mode == "k":
                start = bisect_right(ascending, value)
            elif mode == "d":
                start = total - bisect_left(ascending, value)
            else:
                start = value
        end = start + query.limit
        slots = list(view[start:end])
        more = end < total
        if query.offset is not None:
            return Selection(total, slots, None, end if more else None)
        next_after = None
        if more:
            next_after = encode_cursor(mode, end if mode == "p" else slots[-1])
        return Selection(total, slots, next_after, None)

    def _view(self, query: ListQuery, ascending: array[int]) -> tuple[str, array[int]]:
        descending = query.sort.startswith("-")
        key = query.sort.lstrip("-")
        if not query.filters and key in _NATURAL_SORTS:
            if not descending:
                return "k", ascending
            return "d", self._cached(("d", query.archived), lambda: array("l", reversed(ascending)))
        sort_key = self._sort_key(key)

        def build() -> array[int]:
            slots = [s for s in ascending if self._passes(s, query.filters)]
            if sort_key is not None:
                slots.sort(key=sort_key, reverse=descending)
            elif descending:
                slots.reverse()
            return array("l", slots)

        return "p", self._cached((query.archived, query.sort, query.filters), build)

    def _cached(self, key: tuple[Any, ...], build: Callable[[], array[int]]) -> array[int]:
        if self._views_version != self.life.generation:
            self._views.clear()
            self._views_version = self.life.generation
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = build()
            if len(self._views) > _VIEW_CACHE_SIZE:
                self._views.popitem(last=False)
        return view

    def _sort_key(self, key: str) -> Callable[[int], Any] | None:
        if key in _NATURAL_SORTS:
            return None
        if key in _UPDATED_SORTS:
            return lambda slot: self.builder.updated_ms(self.life, slot)
        if key in ("name", "hs_name", "path", "hs_path"):
            field = key.removeprefix("hs_")
            return lambda slot: self.builder.variable(self.life, slot)[field]
        sample = self.builder.variable(self.life, 0) if self.life.size else {}
        if key in sample.get("values", {}):
            return lambda slot: _sortable(self.builder.variable(self.life, slot)["values"][key])
        raise BadRequest(f"cannot sort by {key!r}")

    def _passes(self, slot: int, filters: tuple[tuple[str, str, int], ...]) -> bool:
        for field, op, moment in filters:
            if field == "created":
                value = self.life.created_ms(slot)
            elif field == "updated":
                value = self.builder.updated_ms(self.life, slot)
            elif field == self.builder.archive_field:
                value = self.life.archived_ms(slot) or 0
            else:
                continue
            if not _compare(value, op, moment):
                return False
        return True


def _compare(value: int, op: str, moment: int) -> bool:
    if op in ("gt", "lt", "eq"):
        return value > moment if op == "gt" else value < moment if op == "lt" else value == moment
    return value >= moment if op == "gte" else value <= moment


def _sortable(value: Any) -> Any:
    if isinstance(value, dict):
        return (1, str(value.get("name", "")))
    if isinstance(value, list):
        return (1, str(len(value)))
    if isinstance(value, bool | int | float):
        return (0, float(value))
    return (1, str(value))
