"""The incremental read of a fetch job: what changed since the last fetch, then deletions.

1. The changes (`HubSpotClient.changed_pages`): each pass, live then archived, newest first,
   which also gives HubSpot's count of the pass; stored page by page as a full listing's pages
   are (one transaction with the job's checkpoint, ids recorded as seen).
2. Deletions without re-reading everything: the objects stored as live (archived) are counted
   against HubSpot's count of the pass. Only when they differ are the pass's ids listed (ids
   only), the ids not stored read by id and stored, and the stored objects the ids listing did
   not show confirmed with HubSpot as the deletion sweep does (`sweep.sweep_and_finish`): marked
   deleted only when HubSpot answers that it holds them no more. Where a pass's objects can be
   windowed by creation time, what differs is found by count windows instead
   (`count_windows.find_by_windows`: purged objects, gone from both listings), unless listing
   the pass is the cheaper way. A type HubSpot deletes by archiving without moving `updated`
   (`ContentTypeSpec.archive_filter`) has its archived pass read what was archived since
   (`_check_moved`): then the live count and the archived pass's whole count (one request, the
   root of its count windows) are compared; the archived side is settled first, and the live
   side only when its count still differs. When the live pass's first answer shows no change
   and counts what is stored live, nothing left it and the archived pass is not asked at all
   (`Opening.skipped`): an unchanged type costs one request.
3. HubDB rows: the tables are listed (one request) or read as the run's tables job kept them
   (`parent_listing`); a table's rows are read whole when its `updatedAt` moved since then, or
   its `rowCount` differs from the rows stored, and swept; the rows of a table no longer
   listed are swept too (a table gone takes its rows with it).

The job's total is what it will store or confirm, known before its first object is stored:
the first answer of each pass (`HubSpotClient.open_changes`, asked before anything is stored
and then read as the pass's first page) either holds every change or is followed by one
``limit=1`` count of the changes. HubDB rows: the rows of the changed tables, each counted
as `rowCount` until its first answer says how many changed. Where counts differ, the pass's
ids listing takes the pass's changes out of the total and all of its objects in. The
completion sets the total to what the job saw (`PageWriter.finish`); until then no
checkpoint lets progress pass it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from smuves_sync.db.fetch_reads import DeletionCosts
from smuves_sync.db.fetch_seen import PresentCounts, fetch_seen_children_present
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.opening import Opening
from smuves_sync.workers.count_windows import WindowsFound, find_by_windows
from smuves_sync.workers.id_listing import list_pass
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.parent_listing import keep_parents, parents_of
from smuves_sync.workers.sweep import ReadDone, SweepScope, sweep_scope

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Passes:
    """What a change listing read, as it reads: rows written, and per pass (archived or not)
    HubSpot's count of the pass, the objects it showed and the requests it took."""

    written: int = 0
    counted: dict[bool, int] = field(default_factory=dict)
    shown: dict[bool, int] = field(default_factory=dict)
    requests: dict[bool, int] = field(default_factory=dict)
    # The archived pass was not asked: nothing left the live one (`Opening.skipped`).
    skipped: bool = False


@dataclass(slots=True)
class _Checked:
    """What checking a change listing's counts found: rows written and marked deleted, what is
    left to sweep, and the requests spent by count windows and by ids listings."""

    written: int = 0
    deleted: int = 0
    scopes: list[SweepScope] = field(default_factory=list)
    windows: int = 0
    listings: int = 0

    def windowed(self, found: WindowsFound | None) -> bool:
        """Count in what count windows found; False when they were not the way (None)."""
        if found is None:
            return False
        self.written, self.deleted = self.written + found.written, self.deleted + found.deleted
        self.windows += found.requests
        return True


@dataclass(frozen=True, slots=True)
class ChangesRead:
    """What changed of a flat type since `since_ms` (epoch milliseconds), then deletions."""

    since_ms: int

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Store what changed, then find what went where the counts differ: by count windows,
        or by listing the pass's ids (and sweeping) when that is cheaper."""
        job = writer.job
        opening = None
        if job.cursor is None:  # from the beginning: the total is what changed, known now
            held = await writer.present_counts()
            # Archiving a page, post, author or tag moves no `updated`: one archived as another
            # comes back leaves the live pass as it was, and only its archive moment shows it
            # (unless nothing is stored live that could have been archived).
            quiet = client.spec(job.content_type).archive_filter is None or held.live == 0
            opening = await client.open_changes(
                job.content_type,
                self.since_ms,
                stored_live=held.live if quiet else None,
                stored_among=writer.stored_live_among,
            )
            if opening.changed is not None:
                await writer.checkpoint(job.cursor, total=job.processed + opening.changed)
            await keep_parents(writer, client, opening)
        passes = await _read_pages(writer, client, self.since_ms, opening=opening)
        stored = await writer.present_counts()
        if passes.skipped:
            checked = _Checked()
        elif client.spec(job.content_type).archive_filter is not None:
            checked = await _check_moved(writer, client, stored, passes)
        else:
            checked = await _check_counts(writer, client, stored, passes)
        costs = DeletionCosts(
            archived_pass=passes.requests.get(True, 0),
            count_windows=checked.windows,
            full_read=checked.listings,
        )
        return ReadDone(
            tuple(checked.scopes), passes.written + checked.written, checked.deleted, costs
        )


async def _read_pages(
    writer: PageWriter,
    client: HubSpotClient,
    since_ms: int,
    parent_id: str | None = None,
    opening: Opening | None = None,
) -> _Passes:
    """Store the changed objects page by page. A parent's children are not checkpointed page
    by page (their job resumes per parent)."""
    job = writer.job
    processed, passes = job.processed, _Passes(skipped=opening is not None and opening.skipped)
    if opening is not None:
        for archived, spent in opening.costs.items():
            passes.requests[archived] = spent
    cursor = job.cursor if parent_id is None else None
    pages = client.changed_pages(
        job.content_type, since_ms, cursor, parent_id=parent_id, opening=opening
    )
    last: set[str] = set()  # the keyset lists again what shares the last page's oldest time
    mark = client.requests
    async for page in pages:
        spent, mark = client.requests - mark, client.requests
        passes.requests[page.archived] = passes.requests.get(page.archived, 0) + spent
        ids = {item.hubspot_id for item in page.items}
        new = page.objects - len(ids & last)
        last = ids
        processed += new
        passes.shown[page.archived] = passes.shown.get(page.archived, 0) + new
        if page.counted is not None:
            passes.counted[page.archived] = page.counted
        after = page.cursor if parent_id is None else writer.job.cursor
        passes.written += await writer.page(
            page.items, page.rejects, cursor=after, processed=processed
        )
    return passes


async def _check_counts(
    writer: PageWriter,
    client: HubSpotClient,
    stored: PresentCounts,
    passes: _Passes,
    parent_id: str | None = None,
) -> _Checked:
    """Compare what is stored as live (archived) with HubSpot's count of the pass; where they
    differ, find what differs by count windows (`count_windows.find_by_windows`) or, when
    listing is cheaper, list the pass's ids, store what was not stored and leave the rest to
    the sweep."""
    content_type = writer.job.content_type
    spec = client.spec(content_type)
    checked = _Checked()
    prefix = f"{parent_id}:" if parent_id is not None else None
    for archived in (False, True) if spec.archived_pass and not passes.skipped else (False,):
        held = passes.counted.get(archived)
        if held is None and parent_id is None:  # resumed after this pass: counted again
            held = await client.count(content_type, archived=archived)
        mine = stored.archived if archived else stored.live
        if mine == held:  # a parent's children uncounted (held None): listed
            continue
        log.info(
            "job %s: %s%s stores %d %s objects, HubSpot counts %d",
            writer.job.id,
            content_type,
            "" if parent_id is None else f" of {parent_id}",
            mine,
            "archived" if archived else "live",
            held,
        )
        if held is not None and parent_id is None:
            # Whether the other state's count matched what was stored as the check began: a
            # live pass that did not is settled first, and the archived one asks both states.
            other = passes.counted.get(not archived)
            settled = other is not None and other == (stored.live if archived else stored.archived)
            found = await find_by_windows(
                writer, client, archived=archived, counted=held, other_settled=settled
            )
            if checked.windowed(found):
                continue
        before = client.requests
        checked.written += await list_pass(writer, client, archived, held, passes.shown, parent_id)
        checked.listings += client.requests - before
        checked.scopes.append(
            SweepScope(archived=archived, prefix=prefix, states=_states(stored, passes, archived))
        )
    return checked


def _states(stored: PresentCounts, passes: _Passes, archived: bool) -> tuple[bool, ...] | None:
    """Where to ask about the stored live objects a live ids listing did not show: live only,
    when the archived pass counts what is stored archived (none of them was archived, short of
    as many objects leaving the archive at once); else in both states."""
    if archived or passes.counted.get(True) != stored.archived:
        return None
    return (False,)


async def _check_moved(
    writer: PageWriter, client: HubSpotClient, stored: PresentCounts, passes: _Passes
) -> _Checked:
    """The counts of a type whose archived pass read only what was archived since the moment
    (`ContentTypeSpec.archive_filter`).

    The live pass's count is compared with what is stored and, when the read found anything
    changed, HubSpot's count of the whole archived pass (one request: the root window of its
    count windows) too: objects purged from the recycle bin show there. The archived side is
    settled first, since its listing is the short one: by count windows (purged from the
    recycle bin: gone; un-archived without `updated` moving: back live), or by its ids listing
    where that is cheaper (the ids it shows that are stored live confirmed by id, the stored
    archived ones it does not show asked about). The live side is settled, by count windows or
    its ids listing, only when its count still differs."""
    content_type = writer.job.content_type
    checked = _Checked()
    live = passes.counted.get(False)
    if live is None:  # resumed after the live pass: counted again
        live = await client.count(content_type)
    if stored.live == live and not any(passes.shown.values()):
        return checked  # nothing changed: a purge from the recycle bin alone waits for a change
    before = client.requests
    root = await client.window(content_type, archived=True, start_ms=None, end_ms=None)
    checked.windows += client.requests - before
    if stored.live == live and stored.archived == root.total:
        return checked
    log.info(
        "job %s: %s stores %d live and %d archived objects, HubSpot counts %d and %d",
        writer.job.id,
        content_type,
        stored.live,
        stored.archived,
        live,
        root.total,
    )
    now = stored  # nothing was written since it was read
    if stored.archived != root.total:
        live_agrees = stored.live == live  # none of the archived pass's missing is live
        found = await find_by_windows(
            writer, client, archived=True, counted=root.total, root=root, other_settled=live_agrees
        )
        if not checked.windowed(found):
            await _settle_archived_by_listing(writer, client, passes, root.total, checked)
        now = await writer.present_counts()
        if now.live == live:
            return checked
    settled = now.archived == root.total
    found = await find_by_windows(
        writer, client, archived=False, counted=live, other_settled=settled
    )
    if checked.windowed(found):
        return checked
    before = client.requests
    checked.written += await list_pass(writer, client, False, live, passes.shown)
    checked.listings += client.requests - before
    checked.scopes.append(SweepScope(archived=False, states=(False,) if settled else None))
    return checked


async def _settle_archived_by_listing(
    writer: PageWriter, client: HubSpotClient, passes: _Passes, counted: int, checked: _Checked
) -> None:
    """The archived pass's ids listed: what it shows stored live confirmed by id, the stored
    archived objects it does not show asked about (back live, or gone)."""
    content_type = writer.job.content_type
    before = client.requests
    moved: list[str] = []
    checked.written += await list_pass(writer, client, True, counted, passes.shown, moved=moved)
    for at in range(0, len(moved), BATCH_READ_SIZE):
        answer = await client.confirm(content_type, moved[at : at + BATCH_READ_SIZE])
        stored_now, gone = await writer.confirmed(answer)
        checked.written, checked.deleted = checked.written + stored_now, checked.deleted + gone
    gone, stored_now, _ = await sweep_scope(writer, client, SweepScope(archived=True))
    checked.written, checked.deleted = checked.written + stored_now, checked.deleted + gone
    checked.listings += client.requests - before


@dataclass(frozen=True, slots=True)
class ChildChangesRead:
    """The changed children (HubDB rows) of the parents changed since `since_ms`."""

    since_ms: int

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Read the changed children of the parents that changed, check counts per parent;
        sweeps where they differ and the children of parents gone."""
        job = writer.job
        spec = client.spec(job.content_type)
        states = await parents_of(writer, client)
        async with writer.reading() as scoped:
            stored = await fetch_seen_children_present(scoped, job.portal_id, job.content_type)
        none = PresentCounts(0, 0)
        todo = [
            s
            for s in states
            if s.updated_ms is None
            or s.updated_ms > self.since_ms
            or stored.get(s.hubspot_id, none).live != s.child_count
        ]
        done_up_to = Cursor.decode(job.cursor, spec.name).parent if job.cursor else None
        left = [s for s in todo if done_up_to is None or _key(s.hubspot_id) > _key(done_up_to)]
        # A changed table's rows count as its rowCount (what the job reads of it at most)
        # until its first answer says how many changed.
        bounds = [s.child_count or 0 for s in left]
        await writer.checkpoint(job.cursor, total=job.processed + sum(bounds))
        checked = _Checked()
        for at, state in enumerate(left):
            later = sum(bounds[at + 1 :])
            held = stored.get(state.hubspot_id, none).live
            found = await self._parent(writer, client, state.hubspot_id, later, held)
            checked.written += found.written
            checked.deleted += found.deleted
            checked.listings += found.listings
            checked.windows += found.windows
            checked.scopes += found.scopes
        gone = sorted(stored.keys() - {s.hubspot_id for s in states})
        if todo or gone:
            log.info(
                "job %s: %s of %d changed table(s) read, of %d gone swept",
                job.id,
                job.content_type,
                len(todo),
                len(gone),
            )
        checked.scopes += [SweepScope(prefix=f"{parent_id}:") for parent_id in gone]
        costs = DeletionCosts(count_windows=checked.windows, full_read=checked.listings)
        return ReadDone(tuple(checked.scopes), checked.written, checked.deleted, costs)

    async def _parent(
        self, writer: PageWriter, client: HubSpotClient, parent_id: str, later: int, held: int
    ) -> _Checked:
        """Read one changed parent's changed children and check its counts (`later`: what the
        parents after it count at most; `held`: its live children stored)."""
        content_type = writer.job.content_type
        spec = client.spec(content_type)
        opening = await client.open_changes(
            content_type,
            self.since_ms,
            parent_id=parent_id,
            stored_live=held,
            stored_among=writer.stored_live_among,
        )
        if opening.changed is not None:
            total = writer.job.processed + opening.changed + later
            await writer.checkpoint(writer.job.cursor, total=total)
        passes = await _read_pages(writer, client, self.since_ms, parent_id, opening)
        async with writer.reading() as scoped:
            present = await fetch_seen_children_present(scoped, writer.job.portal_id, content_type)
        checked = await _check_counts(
            writer, client, present.get(parent_id, PresentCounts(0, 0)), passes, parent_id
        )
        checked.written += passes.written
        after = Cursor(spec.name, parent=parent_id, parent_done=True).encode()
        # The parent is done: what it showed is in the total exactly.
        await writer.checkpoint(after, total=writer.job.processed + later)
        return checked


def _key(object_id: str) -> tuple[int, int, str]:
    return (0, int(object_id), "") if object_id.isdigit() else (1, 0, object_id)
