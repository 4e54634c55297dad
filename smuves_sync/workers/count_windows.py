"""Purged objects found by counting, not listing: creation-time windows of one pass.

An object purged from HubSpot (emptied from its recycle bin: gone from the live and the archived
listing) leaves no trace in any change listing; only a count shows it. When an incremental read
has stored what changed and a pass still counts other than what is stored for it
(`incremental._check_counts`), `find_by_windows` compares counts over windows of creation time:

1. The pass's stored objects are read with their creation time (their documents' `createdAt`
   or `created`), sorted. HubSpot's count of the whole pass is the root window's.
2. A window whose count equals what is stored created within it is taken as it is. One whose
   count differs is split at the creation time of its middle stored object (of its hundredth,
   for a window of at most two pages); the left part is counted (`HubSpotClient.window`: one
   request, `createdAfter`/`createdBefore`, which also lists the part's ids when they fit on
   one page) and the right part's count is the window's less the left's, asked nothing. A
   counted window of more than a page is first compared with the page its count brought (its
   oldest objects: `_past_first_page`), and only the rest of it goes on.
3. A part that one page lists is compared id by id with what is stored in it. What is stored
   and not listed is asked for by id, in the other state and then in the pass's own (it may
   have been archived or un-archived, or sit on a boundary HubSpot drew otherwise), the own
   state skipped for what lies between two objects the answer listed, the other state when
   its count matches what is stored in it (`_confirm_missing`); what HubSpot no longer holds
   is marked deleted. What is listed and not stored is read by id and stored.
4. Each window is split only while the estimate of finding its differences by halving
   (`split_cost`: about a count per halving and difference, the halvings above them shared) is
   below listing it (`listing_cost`: its pages, and a batch read per state asked, per 100 it
   did not show);
   otherwise its ids are listed (several pages: what is not listed
   is confirmed in both states, as the deletion sweep does, since an offset listing can step
   over an object). When the root window itself is cheaper listed, `find_by_windows` returns
   None and the read lists the pass's ids as before ("full read"), so a re-sync never costs more
   than that listing plus its counting requests.

A creation and a purge in the same window do not hide each other: the creation was read (the
change listing comes first) and stored, so the window stores one object more than HubSpot
counts. HubSpot reads `createdAfter` as strictly after and `createdBefore` as strictly before,
in milliseconds: a window is `[start, end)`, asked as `createdAfter=start - 1 ms`.
"""

from __future__ import annotations

import logging
import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from smuves_sync.content_fields import RecordError
from smuves_sync.db.fetch_seen import fetch_seen_created
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE, Confirmation
from smuves_sync.hubspot.windows import WindowAnswer
from smuves_sync.workers.page_writer import PageWriter

log = logging.getLogger(__name__)

# (creation time in epoch milliseconds, id) of a stored object, sorted.
Stored = tuple[int, str]


@dataclass(slots=True)
class _Window:
    """A creation-time window `[start, end)` (None: open), the stored objects created in it,
    HubSpot's count of it and, when one page listed it, its ids."""

    start: int | None
    end: int | None
    stored: Sequence[Stored]
    total: int
    ids: tuple[str, ...] | None = None
    # HubSpot's answer when the window was counted by a request of its own: its first page.
    answer: WindowAnswer | None = None


@dataclass(slots=True)
class WindowsFound:
    """What the count windows found: rows written, rows marked deleted, requests spent,
    windows counted."""

    written: int = 0
    deleted: int = 0
    requests: int = 0
    counted: int = 0
    missing: set[str] = field(default_factory=set)
    unsure: set[str] = field(default_factory=set)
    extra: set[str] = field(default_factory=set)
    # Of `missing`, those whose creation time lies strictly between two objects the same
    # one-page answer listed: not in the pass under any boundary HubSpot drew.
    bracketed: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _Pass:
    """The pass windowed (archived or live) and whether the other state's count matches what
    is stored in it: then none of the objects the windows do not list went there (short of as
    many coming the other way unseen at once), and only the pass's own state is asked."""

    archived: bool
    other_settled: bool

    @property
    def states(self) -> int:
        """The states a missing object is asked about in, at most."""
        return 1 if self.other_settled else 2


def listing_cost(total: int, differences: int, page_size: int, states: int = 2) -> int:
    """Requests to settle a window of `total` objects by listing its ids: its pages, then what
    it did not show asked about in `states` states (a batch read each per 100)."""
    reads = states * math.ceil(differences / BATCH_READ_SIZE)
    return max(math.ceil(total / page_size), 1) + reads


def split_cost(total: int, differences: int, page_size: int, states: int = 2) -> int:
    """Requests to settle `differences` objects of a window of `total` by halving it down to
    parts of a page: a count per halving and difference (the halvings above the differences'
    own parts shared), a part's ids coming with its count, and a batch read per state asked
    per 100."""
    if differences == 0:
        return 0
    halvings = max(math.ceil(math.log2(max(total, 1) / page_size)), 0)
    shared = min(int(math.log2(differences)), halvings)
    reads = states * math.ceil(differences / BATCH_READ_SIZE)
    return differences * (halvings - shared + 1) + reads


def _split_at(stored: Sequence[Stored], page: int | None = None) -> int | None:
    """Where to split a window's stored objects: the index of the first object of the right
    part, nearest the middle (with `page`, of a window of at most two pages: nearest a page
    from the start, the most its count lists, leaving the right part the smallest), with a
    creation time of its own (a window cannot split within one millisecond); None when there
    is none."""
    middle = page if page is not None and len(stored) > page else len(stored) // 2
    for index in sorted(range(1, len(stored)), key=lambda i: abs(i - middle)):
        if stored[index - 1][0] < stored[index][0]:
            return index
    return None


async def stored_creations(
    writer: PageWriter, client: HubSpotClient, *, archived: bool
) -> list[Stored] | None:
    """The pass's stored objects with their creation times, sorted; None when one of them has
    none that can be read (then only a listing can compare them)."""
    job = writer.job
    spec = client.spec(job.content_type)
    keys = spec.fields.created_at
    async with writer.reading() as scoped:
        rows = await fetch_seen_created(
            scoped, job.portal_id, job.content_type, archived=archived, keys=keys
        )
    found: list[Stored] = []
    for row in rows:
        try:
            found.append((spec.created_ms({keys[0]: row.created}), row.hubspot_id))
        except RecordError:
            log.info("job %s: %s has no creation time: no count windows", job.id, row.hubspot_id)
            return None
    found.sort()
    return found


async def find_by_windows(
    writer: PageWriter,
    client: HubSpotClient,
    *,
    archived: bool,
    counted: int,
    root: WindowAnswer | None = None,
    other_settled: bool = False,
) -> WindowsFound | None:
    """Find what differs between the pass's stored objects and HubSpot's (`counted`: its count
    of the pass; `root`: the answer that counted it as a window, when it was one) by count
    windows, store it and mark the gone deleted; None when listing the pass is the cheaper way
    (or its objects cannot be windowed). `other_settled`: the other state's count matches what
    is stored in it (`_Pass`)."""
    spec = client.spec(writer.job.content_type)
    if not spec.created_keyset or spec.parent is not None:
        return None
    stored = await stored_creations(writer, client, archived=archived)
    if stored is None:
        return None
    page = spec.page_size
    windowed = _Pass(archived, other_settled and spec.archived_pass)
    differences = abs(counted - len(stored))
    ids = root.ids if root is not None else None
    split = split_cost(counted, differences, page, windowed.states)
    if ids is None and split >= listing_cost(counted, differences, page, windowed.states):
        return None
    before = client.requests
    found = WindowsFound()
    todo = [_Window(None, None, stored, counted, ids, root)]
    while todo:
        window = todo.pop()
        await _visit(writer, client, window, windowed, found, todo)
    await _settle(writer, client, windowed, found)
    found.requests = client.requests - before
    log.info(
        "job %s: %s %s pass: %d windows counted, %d gone, %d found, %d requests",
        writer.job.id,
        spec.name,
        "archived" if archived else "live",
        found.counted,
        found.deleted,
        len(found.extra),
        found.requests,
    )
    return found


async def _visit(
    writer: PageWriter,
    client: HubSpotClient,
    window: _Window,
    windowed: _Pass,
    found: WindowsFound,
    todo: list[_Window],
) -> None:
    """Take one window: matched, compared id by id, listed, or split in two."""
    content_type, archived, states = writer.job.content_type, windowed.archived, windowed.states
    page = client.spec(content_type).page_size
    differences = abs(window.total - len(window.stored))
    if differences == 0:
        return
    if window.ids is None and window.total <= page:
        answer = await client.window(
            content_type, archived=archived, start_ms=window.start, end_ms=window.end
        )
        found.counted += 1
        window.total, window.ids, window.answer = answer.total, answer.ids, answer
        if window.ids is None:  # it grew past a page meanwhile: take it again
            todo.append(window)
            return
    if window.ids is not None:
        _compare(window, window.ids, found.missing, found.extra, found.bracketed)
        return
    rest = _past_first_page(window, found, page)
    if rest is not None:
        todo.append(rest)
        return
    cut = _split_at(window.stored, page if window.total <= 2 * page else None)
    split = split_cost(window.total, differences, page, states)
    # A tie goes to halving, whose estimate runs high: its parts' first pages are compared as
    # they come (`_past_first_page`), and what its one-page parts do not list is asked about
    # in one state (`_confirm_missing`), what a listing of several pages does not in both.
    if cut is None or split > listing_cost(window.total, differences, page, states):
        ids = await client.window_ids(
            content_type,
            archived=archived,
            start_ms=window.start,
            end_ms=window.end,
            opened=window.answer,
        )
        _compare(window, ids, found.unsure, found.extra)
        return
    at = window.stored[cut][0]
    left = _Window(window.start, at, window.stored[:cut], 0)
    answer = await client.window(content_type, archived=archived, start_ms=left.start, end_ms=at)
    found.counted += 1
    left.total, left.ids, left.answer = answer.total, answer.ids, answer
    right = _Window(at, window.end, window.stored[cut:], max(window.total - answer.total, 0))
    todo += [right, left]


def _past_first_page(window: _Window, found: WindowsFound, page: int) -> _Window | None:
    """What is left of a window whose count answered its first page (its oldest objects: a
    listing's default order is by creation), once that page is compared: the part created from
    the newest of them on, with its count (the window's less what the page showed before it),
    asked nothing. None when the page cannot be placed: not a whole page of distinct ids (one
    without a usable id may be anywhere), an id it shows is not stored in the window (its
    creation time unknown), or it is not oldest first."""
    answer = window.answer
    if answer is None or window.ids is not None:
        return None
    if len(answer.first) != page or len(set(answer.first)) != page:
        return None
    times = dict((hubspot_id, created) for created, hubspot_id in window.stored)
    shown = [times.get(hubspot_id) for hubspot_id in answer.first]
    known = [created for created in shown if created is not None]
    if len(known) != len(shown) or known != sorted(known):
        return None
    newest = known[-1]
    cut = bisect_left(window.stored, (newest, ""))
    if cut == 0:  # the whole page within one millisecond: nothing is placed before it
        return None
    before = [i for i, created in zip(answer.first, known, strict=True) if created < newest]
    listed = _Window(window.start, newest, window.stored[:cut], len(before))
    _compare(listed, before, found.missing, found.extra, found.bracketed)
    return _Window(newest, window.end, window.stored[cut:], max(window.total - len(before), 0))


def _compare(
    window: _Window,
    ids: Sequence[str],
    missing: set[str],
    extra: set[str],
    bracketed: set[str] | None = None,
) -> None:
    """What the window stores and HubSpot does not list, and the other way round; with
    `bracketed` (`ids`: one answer listing the whole window), which of the missing lie
    strictly between two listed objects' creation times."""
    mine = {hubspot_id for _, hubspot_id in window.stored}
    listed = set(ids)
    gone = mine - listed
    missing.update(gone)
    extra.update(listed - mine)
    if bracketed is None or not gone:
        return
    times = [created for created, hubspot_id in window.stored if hubspot_id in listed]
    if times:  # window.stored is sorted: the earliest and the latest listed
        bracketed.update(i for t, i in window.stored if i in gone and times[0] < t < times[-1])


async def _settle(
    writer: PageWriter, client: HubSpotClient, windowed: _Pass, found: WindowsFound
) -> None:
    """Ask about what the windows showed: what is stored and not listed in the pass is asked
    for by id (`_confirm_missing`), what is listed and not stored in this one; store what
    HubSpot holds, mark the gone deleted."""
    content_type = writer.job.content_type
    asked = sorted(found.missing | found.unsure)
    # One that another window listed is in the pass after all: asked in both states.
    bracketed = found.bracketed - found.extra
    for at in range(0, len(asked), BATCH_READ_SIZE):
        answer = await _confirm_missing(
            client, content_type, asked[at : at + BATCH_READ_SIZE], windowed, bracketed
        )
        written, deleted = await writer.confirmed(answer)
        found.written, found.deleted = found.written + written, found.deleted + deleted
    if found.extra:
        answer = await client.confirm_in(
            content_type, sorted(found.extra), archived=windowed.archived
        )
        found.written += await writer.store(answer.present, answer.rejects)


async def _confirm_missing(
    client: HubSpotClient,
    content_type: str,
    ids: list[str],
    windowed: _Pass,
    bracketed: set[str],
) -> Confirmation:
    """Ask about stored objects a pass's windows did not list: in the other state first (live,
    for the archived pass), then, for those it does not hold, in the pass's own state too,
    except the bracketed ones. A window's listing is HubSpot's word on one window, and asked by
    id a boundary HubSpot drew otherwise cannot delete an object; but one whose creation time
    lies between two objects that one answer listed whole is in no boundary's way: that answer
    says the pass does not hold it, and one batch read settles it. When the other state's count
    settles it (`_Pass`), one batch read in the pass's own state settles them all instead; each
    object is still asked about by id before it is marked deleted."""
    archived = windowed.archived
    if not client.spec(content_type).archived_pass:
        return await client.confirm(content_type, ids)
    if windowed.other_settled and not set(ids) <= bracketed:
        return await client.confirm_in(content_type, ids, archived=archived)
    other = await client.confirm_in(content_type, ids, archived=not archived)
    again = [hubspot_id for hubspot_id in other.gone if hubspot_id not in bracketed]
    if not again:
        return other
    own = await client.confirm_in(content_type, again, archived=archived)
    return Confirmation(
        other.present + own.present,
        tuple(i for i in other.gone if i in bracketed) + own.gone,
        (),
        other.rejects + own.rejects,
    )
