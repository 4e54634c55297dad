"""The incremental read of a fetch job: what changed since the last fetch, then deletions.

1. The changes (`HubSpotClient.changed_pages`): each pass, live then archived, newest first,
   which also gives HubSpot's count of the pass; stored page by page as a full listing's pages
   are (one transaction with the job's checkpoint, ids recorded as seen).
2. Deletions without re-reading everything: the objects stored as live (archived) are counted
   against HubSpot's count of the pass. Only when they differ are the pass's ids listed (ids
   only), the ids not stored read by id and stored, and the stored objects the ids listing did
   not show confirmed with HubSpot as the deletion sweep does (`sweep.sweep_and_finish`): marked
   deleted only when HubSpot answers that it holds them no more.
3. HubDB rows: the tables are listed (one request); a table's rows are read whole when its
   `updatedAt` moved since then, or its `rowCount` differs from the rows stored, and swept; the
   rows of a table no longer listed are swept too (a table gone takes its rows with it).

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
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from smuves_sync.db.fetch_reads import DeletionCosts
from smuves_sync.db.fetch_seen import (
    PresentCounts,
    fetch_seen_children_present,
    fetch_seen_present_counts,
    fetch_seen_unstored,
)
from smuves_sync.hubspot.changes import Opening
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.workers.count_windows import find_by_windows
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.sweep import ReadDone, SweepScope

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
            async with writer.reading() as scoped:
                held = await fetch_seen_present_counts(scoped, job.portal_id, job.content_type)
            opening = await client.open_changes(
                job.content_type, self.since_ms, stored_live=held.live
            )
            if opening.changed is not None:
                await writer.checkpoint(job.cursor, total=job.processed + opening.changed)
        passes = await _read_pages(writer, client, self.since_ms, opening=opening)
        async with writer.reading() as scoped:
            stored = await fetch_seen_present_counts(scoped, job.portal_id, job.content_type)
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
            found = await find_by_windows(writer, client, archived=archived, counted=held)
            if found is not None:
                checked.written += found.written
                checked.deleted += found.deleted
                checked.windows += found.requests
                continue
        before = client.requests
        await _list_pass(writer, client, archived, held, passes, parent_id)
        checked.written += await _store_unstored(writer, client)
        checked.listings += client.requests - before
        checked.scopes.append(SweepScope(archived=archived, prefix=prefix))
    return checked


async def _list_pass(
    writer: PageWriter,
    client: HubSpotClient,
    archived: bool,
    held: int | None,
    passes: _Passes,
    parent_id: str | None,
) -> None:
    """Record every id of the pass as seen, the total trading the pass's changes for its count."""
    total = writer.job.total
    if total is not None and held is not None:
        # The ids listing shows the whole pass, the changes read among them.
        total = total - passes.shown.get(archived, 0) + held
        await writer.checkpoint(writer.job.cursor, total=total)
    content_type = writer.job.content_type
    ids = client.listed_ids(content_type, archived=archived, parent_id=parent_id)
    await _see_ids(writer, ids)


async def _see_ids(writer: PageWriter, pages: AsyncIterator[list[str]]) -> None:
    """Record every id of an ids-only listing as seen by the job (progress: the new ones)."""
    async for ids in pages:
        await writer.see(ids)


async def _store_unstored(writer: PageWriter, client: HubSpotClient) -> int:
    """Read by id and store what an ids listing showed that is not stored: rows written."""
    after, written = "", 0
    while True:
        async with writer.reading() as scoped:
            ids = await fetch_seen_unstored(scoped, writer.job, after=after, limit=BATCH_READ_SIZE)
        if not ids:
            return written
        after = ids[-1]
        answer = await client.confirm(writer.job.content_type, ids)
        written += await writer.store(answer.present, answer.rejects)


@dataclass(frozen=True, slots=True)
class ChildChangesRead:
    """The changed children (HubDB rows) of the parents changed since `since_ms`."""

    since_ms: int

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Read the changed children of the parents that changed, check counts per parent;
        sweeps where they differ and the children of parents gone."""
        job = writer.job
        spec = client.spec(job.content_type)
        states = await client.parent_states(job.content_type)
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
            content_type, self.since_ms, parent_id=parent_id, stored_live=held
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
