"""Following HubSpot's forward paging, independent of HTTP.

A listing answers with `paging.next.after` (an opaque token) or, for HubDB rows in random
access mode, `paging.next.offset` (a row number). `ForwardPaging` reads that from each body,
turns it into the next `Position`, and refuses anything that would loop: a token seen before,
an offset that does not grow, or an empty page that still promises more.

A listing that hands out a fresh token with every page never repeats one, so `ListingBound`
stops it by what it has produced instead: far more objects than HubSpot counted (see
`runaway_limit`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

# A listing may run past HubSpot's count: objects created while it runs are listed too, and a
# count taken before a long park (a spent daily limit) may be a day old. It is taken for one
# that never ends once it has listed twice the count, or the count plus this many pages,
# whichever is more. Twice: a portal does not double while one fetch reads it, and a runaway
# costs at most as many requests again as the honest listing. The pages: a small portal may
# well gain a bulk import's worth, and a runaway of it costs ten requests.
RUNAWAY_SLACK_PAGES = 10
# Without any count, a listing is stopped here: far beyond the CMS content of any one portal
# (the fetch handler always has a count; this guards callers that do not), and a runaway of
# 100-object pages is stopped after 100,000 requests, hours of a portal's budget, not never.
UNCOUNTED_MAX_OBJECTS = 10_000_000


class PagingError(ValueError):
    """The body's paging information is unusable or would make the listing loop."""


def runaway_limit(counted: int | None, page_size: int) -> int:
    """The most objects a listing of `counted` objects (None: unknown) may produce."""
    if counted is None:
        return UNCOUNTED_MAX_OBJECTS
    return max(2 * counted, counted + RUNAWAY_SLACK_PAGES * page_size)


class ListingBound:
    """Counts what a listing produced against what HubSpot counted, to stop one that never ends.

    The count is the caller's (`expected`: objects still to come) when it has one; else the
    sum of the `total`s the listings report on their first page (a listing walked in parts,
    HubDB rows table by table, reports one per part); else unknown.
    """

    def __init__(self, page_size: int, expected: int | None = None) -> None:
        self.page_size = page_size
        self.seen = 0
        self._expected = expected
        self._reported: int | None = 0

    @property
    def counted(self) -> int | None:
        """HubSpot's count of what this listing should produce, if known."""
        return self._expected if self._expected is not None else self._reported

    @property
    def limit(self) -> int:
        """The most objects it may produce."""
        return runaway_limit(self.counted, self.page_size)

    def part_started(self, total: int | None) -> None:
        """A part of the listing answered its first page, with its `total` if it gave one."""
        if self._reported is not None:
            self._reported = None if total is None else self._reported + total

    def add(self, objects: int) -> bool:
        """Count a page's objects; False once the listing has gone past its limit."""
        self.seen += objects
        return self.seen <= self.limit

    def describe(self) -> str:
        """How far past the count the listing went, for the error that stops it."""
        if self.counted is None:
            return (
                f"{self.seen:,} objects and no count from HubSpot; a listing without one is "
                f"stopped past {UNCOUNTED_MAX_OBJECTS:,}"
            )
        return (
            f"{self.seen:,} objects against HubSpot's count of {self.counted:,} (stopped past "
            f"{self.limit:,}: twice the count or the count plus {RUNAWAY_SLACK_PAGES} pages, "
            f"whichever is more)"
        )


@dataclass(frozen=True, slots=True)
class Position:
    """Where a listing continues: an `after` token, an `offset`, a creation time (a keyset
    listing sorted by `createdAt`: objects created after it), or none (the beginning)."""

    after: str | None = None
    offset: int | None = None
    created_after: int | None = None  # epoch milliseconds
    # a keyset listing sorted by `updatedAt`: objects updated after it (epoch milliseconds)
    updated_after: int | None = None
    # … newest first (`-updatedAt`): objects updated before it (epoch milliseconds)
    updated_before: int | None = None

    def query(self) -> dict[str, str]:
        """The query parameters that ask for the page at this position."""
        params: dict[str, str] = {}
        if self.after is not None:
            params["after"] = self.after
        if self.offset is not None:
            params["offset"] = str(self.offset)
        if self.created_after is not None:
            params["createdAfter"] = iso_ms(self.created_after)
        if self.updated_after is not None:
            params["updatedAfter"] = iso_ms(self.updated_after)
        if self.updated_before is not None:
            params["updatedBefore"] = iso_ms(self.updated_before)
        return params


def iso_ms(epoch_ms: int) -> str:
    """Epoch milliseconds as HubSpot's date-time parameters take them (UTC, `Z`)."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
