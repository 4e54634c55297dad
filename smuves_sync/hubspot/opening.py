"""The opening of a change listing: the first answer of each pass, asked before anything is
stored so that the job knows how many objects it will read (`Changes.open_changes`).

A first answer that reaches back to the moment lists every change of its pass. One that does
not is followed by the pass's second page asked for what was updated after the moment too
(`updatedAfter` beside the keyset's `updatedBefore`): its `total` counts the changes the first
page did not hold, and the listing reads it as its second page instead of asking again, so
counting costs no request of its own. Only an answer that is not newest first (an API that
ignores the sort) is counted by a ``limit=1`` request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from smuves_sync.content_fields import ContentRecord
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.hubspot.listing import Page
from smuves_sync.hubspot.paging import Position


def update_ms(record: ContentRecord) -> int | None:
    """When `record` was last updated, in epoch milliseconds (None: it does not say)."""
    return None if record.updated_at is None else round(record.updated_at.timestamp() * 1000)


def count_value(value: object) -> int | None:
    """A count as HubSpot sent it (`total`), or None when it is not one."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None  # type: ignore[return-value]


# One answer of a listing: its body, its results, whether it announces another page.
Answer = tuple[dict[str, Any], list[Any], bool]
# How many of some ids (as stored) the store holds live, of the type being read.
StoredAmong = Callable[[list[str]], Awaitable[int]]


@dataclass(frozen=True, slots=True)
class Opening:
    """The first answer of each pass of a change listing, held until its pass is read, and
    how many objects the listing will show (`changed`; None when HubSpot did not say)."""

    answers: Mapping[bool, Answer]
    changed: int | None
    # The requests each pass's opening took.
    costs: Mapping[bool, int] = field(default_factory=dict)
    # The archived pass was not asked: nothing left the live pass (`Changes.open_changes`).
    skipped: bool = False
    # A pass's second page, asked with the opening to count its changes, and where it starts.
    seconds: Mapping[bool, tuple[Position, Answer]] = field(default_factory=dict)


def changed_on(
    spec: ContentTypeSpec, answer: Answer, archived: bool, since_ms: int, parent_id: str | None
) -> int | None:
    """The objects a pass's first answer lists as changed when it is the pass's whole change
    listing (newest first and reaching back to `since_ms`, or the last page), else None."""
    _, results, more = answer
    records, rejects = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
    times = [update_ms(record) for record in records]
    if not newest_first_order(times):
        return None
    if more and min((ms for ms in times if ms is not None), default=since_ms) > since_ms:
        return None
    changed = tuple(r for r, ms in zip(records, times, strict=True) if ms is None or ms > since_ms)
    return Page(changed, "", archived, rejects=rejects).objects


def newest_first_order(times: list[int | None]) -> bool:
    """Whether a page's update times are all known and newest first."""
    known = [ms for ms in times if ms is not None]
    return len(known) == len(times) and known == sorted(known, reverse=True)


def second_page(
    spec: ContentTypeSpec, answer: Answer, archived: bool, since_ms: int, parent_id: str | None
) -> tuple[Position, int] | None:
    """Where a pass's second page starts (what was updated before the first page's oldest, plus
    a millisecond, as the keyset asks) and how many of the first page's objects it does not list
    again, when the first answer is newest first and more changed than it holds; else None."""
    _, results, more = answer
    records, rejects = spec.read_page(results, parent_id=parent_id, archived_pass=archived)
    times = [update_ms(record) for record in records]
    if not (more and records and newest_first_order(times)):
        return None
    known = [ms for ms in times if ms is not None]
    oldest = min(known)
    if oldest <= since_ms:
        return None
    newer = tuple(r for r, ms in zip(records, times, strict=True) if ms is not None and ms > oldest)
    return Position(updated_before=oldest + 1), Page(newer, "", archived, rejects=rejects).objects


async def nothing_left(
    spec: ContentTypeSpec,
    live: Answer,
    changed: int | None,
    since_ms: int,
    parent_id: str | None,
    stored_live: int,
    stored_among: StoredAmong | None,
) -> bool:
    """Whether no object left the live pass since `since_ms`: its count is what is stored
    live plus the changes its first answer lists (`changed`: all of them, or None) that are
    not stored live. Every object that entered the live listing was created or un-archived,
    and so listed as changed (for a type whose archiving moves `updated`): what is stored
    live less what left, plus what entered, is the count only when nothing left."""
    live_total = count_value(live[0].get("total"))
    if live_total is None or changed is None:
        return False
    if changed == 0:
        return live_total == stored_live
    if stored_among is None or spec.archive_filter is not None:
        return False
    records, rejects = spec.read_page(live[1], parent_id=parent_id, archived_pass=False)
    times = [update_ms(record) for record in records]
    ids = [
        r.hubspot_id for r, ms in zip(records, times, strict=True) if ms is None or ms > since_ms
    ]
    if rejects or len(ids) != changed:
        return False
    return live_total == stored_live + len(ids) - await stored_among(ids)
