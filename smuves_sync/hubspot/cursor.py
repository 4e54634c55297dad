"""The resume point of a listing, as an opaque string a job stores between pages.

A `Cursor` says which pass (live or archived) the listing is in, where in that pass it stands
(`Position`), for a child type (HubDB rows) which parent object it is in and whether that
parent is finished, and whether the whole listing is done. It also carries what a resumed
listing must still know to judge whether it saw everything: whether it is the second pass
that completes a listing (`recheck`), the `total` the current part reported on its first page,
and whether a later page reported another (`drifted`: objects came or went while it ran),
and the listing's `Baseline`: when it began and what each pass counted then, which its end is
checked against. `encode` makes it a short ASCII string; `decode` refuses strings that are
damaged or that belong to another content type. A cursor saved before a field existed decodes
with that field unset (a listing resumed from one is checked as it would have been then).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field, replace
from typing import Any

from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.paging import Position

_PREFIX = "c1."


@dataclass(frozen=True, slots=True)
class Baseline:
    """What a first listing's end is checked against: `since`, a moment before it began
    (epoch milliseconds, less a margin for HubSpot's clock), so that every object created
    after its first page is dated after it; and HubSpot's count of each pass (`live`,
    `archived`) on that pass's first page, None until then or when the page gave none."""

    since: int
    live: int | None = None
    archived: int | None = None

    def started(self, archived: bool) -> int | None:
        """The count of the pass (`archived` or live) when its first page came."""
        return self.archived if archived else self.live

    def with_start(self, archived: bool, total: int) -> Baseline:
        """This baseline with the count of a pass's first page."""
        return replace(self, archived=total) if archived else replace(self, live=total)


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where to resume one content type's listing."""

    content_type: str
    archived: bool = False
    position: Position = field(default_factory=Position)
    parent: str | None = None
    parent_done: bool = False
    done: bool = False
    recheck: bool = False
    part_total: int | None = None
    drifted: bool = False
    baseline: Baseline | None = None

    def encode(self) -> str:
        """The cursor as an opaque string (safe in URLs, JSON and text columns)."""
        data: dict[str, Any] = {"t": str(self.content_type)}
        if self.archived:
            data["a"] = 1
        if self.position.after is not None:
            data["after"] = self.position.after
        if self.position.offset is not None:
            data["off"] = self.position.offset
        if self.position.created_after is not None:
            data["ca"] = self.position.created_after
        if self.position.updated_after is not None:
            data["ua"] = self.position.updated_after
        if self.position.updated_before is not None:
            data["ub"] = self.position.updated_before
        if self.parent is not None:
            data["p"] = self.parent
        if self.parent_done:
            data["pd"] = 1
        if self.done:
            data["done"] = 1
        if self.recheck:
            data["r"] = 1
        if self.part_total is not None:
            data["pt"] = self.part_total
        if self.drifted:
            data["dr"] = 1
        if self.baseline is not None:
            data["bs"] = self.baseline.since
            if self.baseline.live is not None:
                data["bl"] = self.baseline.live
            if self.baseline.archived is not None:
                data["ba"] = self.baseline.archived
        raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
        return _PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str, content_type: str) -> Cursor:
        """Parse a string from `encode`; `InvalidInput` if it is damaged or of another type."""
        if not text.startswith(_PREFIX):
            raise InvalidInput(f"not a {content_type} listing cursor")
        payload = text[len(_PREFIX) :]
        try:
            data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError):
            raise InvalidInput(f"damaged {content_type} listing cursor") from None
        if not isinstance(data, dict) or data.get("t") != str(content_type):
            raise InvalidInput(f"the cursor does not belong to a {content_type} listing")
        after, offset, parent = data.get("after"), data.get("off"), data.get("p")
        created_after, part_total = data.get("ca"), data.get("pt")
        updated_after, updated_before = data.get("ua"), data.get("ub")
        if not (
            (after is None or isinstance(after, str))
            and _count_or_none(offset)
            and _count_or_none(created_after)
            and _count_or_none(updated_after)
            and _count_or_none(updated_before)
            and _count_or_none(part_total)
            and (parent is None or isinstance(parent, str))
            and all(_count_or_none(data.get(key)) for key in ("bs", "bl", "ba"))
        ):
            raise InvalidInput(f"damaged {content_type} listing cursor")
        return cls(
            content_type=str(content_type),
            archived=bool(data.get("a")),
            position=Position(
                after=after,
                offset=offset,
                created_after=created_after,
                updated_after=updated_after,
                updated_before=updated_before,
            ),
            parent=parent,
            parent_done=bool(data.get("pd")),
            done=bool(data.get("done")),
            recheck=bool(data.get("r")),
            part_total=part_total,
            drifted=bool(data.get("dr")),
            baseline=_baseline(data),
        )


def _count_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _baseline(data: dict[str, Any]) -> Baseline | None:
    since = data.get("bs")
    if since is None:
        return None  # a first listing begun by a release that kept none, or a second pass
    return Baseline(since, live=data.get("bl"), archived=data.get("ba"))
