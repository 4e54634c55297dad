"""Whether a finished listing saw everything, or may have missed objects.

HubSpot's `after` cursors are offsets: an object that leaves a listing while it runs (deleted,
archived) moves every later one a place forward, and the one that crosses a page boundary is
never listed. The listing cannot see that happen, so its end is checked by counts:

- every page of a part reported the same `total` as its first (else objects came or went);
- it listed exactly as many objects as HubSpot counts now;
- with a `Baseline` (a first listing of a type whose listing takes `createdAfter`): each pass
  counts now what it counted on its first page plus what was created since the listing
  began. `end = start + created - gone`, so any object gone (or moved between the live and
  the archived listing) shows, even when as many were created meanwhile and every other
  count holds still. The baseline's moment is taken a margin before the first page (HubSpot
  dates a creation by its own clock): an object created within that margin before the
  listing is counted twice and costs a second pass, never a missed object.
"""

from __future__ import annotations

from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.hubspot.cursor import Baseline
from smuves_sync.hubspot.listing import Listing


async def missed_why(
    listing: Listing,
    spec: ContentTypeSpec,
    passes: list[bool],
    listed: int,
    drifted: bool,
    baseline: Baseline | None = None,
) -> str | None:
    """Why a finished listing of `spec` (its `passes`: live, archived) may have missed
    objects, or None when the counts show it saw everything."""
    if drifted:
        return "its totals moved while it ran"
    counted = 0
    for archived in passes:
        now = await listing.count(spec.name, archived=archived)
        counted += now
        began = baseline.started(archived) if baseline is not None else None
        if baseline is not None and began is not None:
            went = await _went(listing, spec, archived, baseline.since, began, now)
            if went is not None:
                return went
    return None if counted == listed else f"{listed:,} listed, {counted:,} counted now"


async def _went(
    listing: Listing, spec: ContentTypeSpec, archived: bool, since: int, began: int, now: int
) -> str | None:
    """What moved in one pass while it ran, by its counts: `began` on its first page, `now`
    at its end; between them only the objects created after `since` may have come."""
    which = "archived" if archived else "live"
    if now < began:
        return f"{began - now:,} {which} objects fewer than at its start"
    # What was created since is counted among `now`: with none now, none came.
    created = await listing.created_since(spec, since, archived=archived) if now else 0
    if began + created == now:
        return None
    return (
        f"{began:,} {which} objects at its start and {created:,} created since, but {now:,} "
        "now: objects went (or moved between live and archived) while it ran"
    )
