"""Following HubSpot's forward paging, independent of HTTP.

A listing answers with `paging.next.after` (an opaque token) or, for HubDB rows in random
access mode, `paging.next.offset` (a row number). `ForwardPaging` reads that from each body,
turns it into the next `Position`, and refuses anything that would loop: a token seen before,
an offset that does not grow, or an empty page that still promises more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class PagingError(ValueError):
    """The body's paging information is unusable or would make the listing loop."""


@dataclass(frozen=True, slots=True)
class Position:
    """Where a listing continues: an `after` token, an `offset`, or neither (the beginning)."""

    after: str | None = None
    offset: int | None = None

    def query(self) -> dict[str, str]:
        """The query parameters that ask for the page at this position."""
        params: dict[str, str] = {}
        if self.after is not None:
            params["after"] = self.after
        if self.offset is not None:
            params["offset"] = str(self.offset)
        return params


class ForwardPaging:
    """Walks one listing forward from `start`, one response body at a time."""

    def __init__(self, start: Position | None = None) -> None:
        self._current = start or Position()
        # Every token already used: HubSpot never hands the same one out twice in a listing.
        self._seen: set[str] = {self._current.after} if self._current.after else set()

    @property
    def current(self) -> Position:
        """The position of the page most recently asked for."""
        return self._current

    def advance(self, body: Mapping[str, Any], result_count: int) -> Position | None:
        """The position after `body`'s page, or None when the listing is complete."""
        paging = body.get("paging")
        if paging is None:
            return None
        if not isinstance(paging, Mapping):
            raise PagingError(f"'paging' is {type(paging).__name__}, expected an object")
        nxt = paging.get("next")
        if nxt is None:
            return None
        if not isinstance(nxt, Mapping):
            raise PagingError(f"'paging.next' is {type(nxt).__name__}, expected an object")
        if result_count == 0:
            raise PagingError("an empty page announces a next page")
        position = self._next_position(nxt)
        self._current = position
        return position

    def _next_position(self, nxt: Mapping[str, Any]) -> Position:
        after = nxt.get("after")
        if after is not None:
            if not isinstance(after, str) or not after:
                raise PagingError("'paging.next.after' is not a non-empty string")
            if after in self._seen:
                raise PagingError(f"the paging cursor {after[:40]!r} repeats")
            self._seen.add(after)
            return Position(after=after)
        offset = nxt.get("offset")
        if offset is not None:
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
                raise PagingError("'paging.next.offset' is not a non-negative integer")
            if offset <= (self._current.offset or 0):
                raise PagingError(f"the paging offset {offset} does not move forward")
            return Position(offset=offset)
        raise PagingError("'paging.next' has neither 'after' nor 'offset'")
