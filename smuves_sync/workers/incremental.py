"""The incremental read of a fetch job: what changed since the last fetch, then deletions.

1. The changes (`HubSpotClient.changed_pages`): each pass, live then archived, newest first,
   which also gives HubSpot's count of the pass; stored page by page as a full listing's pages
   are (one transaction with the job's checkpoint, ids recorded as seen).
2. Deletions without re-reading everything: the objects stored as live (archived) are counted
   against HubSpot's count of the pass. Only when they differ are the pass's ids listed (ids
   only), the ids not stored read by id and stored, and the stored objects the ids listing did
   not show confirmed with HubSpot as the deletion sweep does (`sweep.sweep_and_finish`): marked
   deleted only when HubSpot answers that it holds them no more. A type HubSpot deletes by
   archiving without moving `updated` (`ContentTypeSpec.archive_filter`) has its archived pass
   read what was archived since (`_check_moved`): then only the live count is compared; when
   it differs, the archived side is settled first (its count; on a difference its ids listing,
   the objects it shows that are stored live confirmed by id, and the stored archived objects it
   does not show — un-archived, or purged — asked about), and the live ids are listed only
   when the live count still differs.
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

from smuves_sync.db.fetch_seen import (
    PresentCounts,
    fetch_seen_children_present,
    fetch_seen_present_counts,
    fetch_seen_stored_live,
    fetch_seen_unstored,
)
from smuves_sync.hubspot.changes import Opening
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.sweep import ReadDone, SweepScope, sweep_scope

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Passes:
    """What a change listing read, as it reads: rows written, and per pass (archived or not)
    HubSpot's count of the pass and the objects it showed."""

    written: int = 0
    counted: dict[bool, int] = field(default_factory=dict)
    shown: dict[bool, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChangesRead:
    """What changed of a flat type since `since_ms` (epoch milliseconds), then deletions."""

    since_ms: int

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Store what changed, then list ids where the counts differ; sweeps only there."""
        job = writer.job
        opening = None
        if job.cursor is None:  # from the beginning: the total is what changed, known now
            opening = await client.open_changes(job.content_type, self.since_ms)
            if opening.changed is not None:
                await writer.checkpoint(job.cursor, total=job.processed + opening.changed)
        passes = await _read_pages(writer, client, self.since_ms, opening=opening)
        stored = await _stored(writer)
        if client.spec(job.content_type).archive_filter is not None:
            found, scopes, deleted = await _check_moved(writer, client, stored, passes)
            return ReadDone(tuple(scopes), passes.written + found, deleted)
        found, scopes = await _check_counts(writer, client, stored, passes)
        return ReadDone(tuple(scopes), passes.written + found)


async def _stored(writer: PageWriter) -> PresentCounts:
    async with writer.reading() as scoped:
        return await fetch_seen_present_counts(
            scoped, writer.job.portal_id, writer.job.content_type
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
    processed, passes = job.processed, _Passes()
    cursor = job.cursor if parent_id is None else None
    pages = client.changed_pages(
        job.content_type, since_ms, cursor, parent_id=parent_id, opening=opening
    )
    last: set[str] = set()  # the keyset lists again what shares the last page's oldest time
    async for page in pages:
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
) -> tuple[int, list[SweepScope]]:
    """Compare what is stored as live (archived) with HubSpot's count of the pass; where they
    differ, list the pass's ids, store what was not stored: (rows written, what to sweep)."""
    content_type = writer.job.content_type
    spec = client.spec(content_type)
    changed, scopes = 0, []
    prefix = f"{parent_id}:" if parent_id is not None else None
    for archived in (False, True) if spec.archived_pass else (False,):
        held = passes.counted.get(archived)
        if held is None and parent_id is None:  # resumed after this pass: counted again
            held = await client.count(content_type, archived=archived)
        mine = stored.archived if archived else stored.live
        if mine == held:  # a parent's children uncounted (held None): listed
            continue
        log.info(
            "job %s: %s%s stores %d %s objects, HubSpot counts %d: listing their ids",
            writer.job.id,
            content_type,
            "" if parent_id is None else f" of {parent_id}",
            mine,
            "archived" if archived else "live",
            held,
        )
        changed += await _list_pass(writer, client, passes, archived, held, parent_id)
        scopes.append(SweepScope(archived=archived, prefix=prefix))
    return changed, scopes


async def _check_moved(
    writer: PageWriter, client: HubSpotClient, stored: PresentCounts, passes: _Passes
) -> tuple[int, list[SweepScope], int]:
    """The counts of a type whose archived pass read only what was archived since the moment
    (`ContentTypeSpec.archive_filter`): (rows written, what to sweep, rows marked deleted).

    The live count alone is compared (HubSpot's count of the archived pass would cost a request
    more). When it differs, something moved that neither pass showed — an object un-archived
    without its `updated` moving, one archived before the moment, one purged — and the archived
    side is settled first, since its listing is the short one: its count, and on a difference
    its ids, the ids it shows that are stored live confirmed by id (found archived: stored so),
    the stored archived ones it does not show asked about (found live: back live; gone:
    deleted). The live ids are listed only when the live count still differs."""
    content_type = writer.job.content_type
    live = passes.counted.get(False)
    if live is None:  # resumed after the live pass: counted again
        live = await client.count(content_type)
    if stored.live == live:
        return 0, [], 0
    archived = await client.count(content_type, archived=True)
    log.info(
        "job %s: %s stores %d live and %d archived objects, HubSpot counts %d and %d",
        writer.job.id,
        content_type,
        stored.live,
        stored.archived,
        live,
        archived,
    )
    written = deleted = 0
    if stored.archived != archived:
        moved: list[str] = []
        written += await _list_pass(writer, client, passes, True, archived, moved=moved)
        for at in range(0, len(moved), BATCH_READ_SIZE):
            answer = await client.confirm(content_type, moved[at : at + BATCH_READ_SIZE])
            stored_now, gone = await writer.confirmed(answer)
            written, deleted = written + stored_now, deleted + gone
        gone, stored_now, _ = await sweep_scope(writer, client, SweepScope(archived=True))
        written, deleted = written + stored_now, deleted + gone
        if (await _stored(writer)).live == live:
            return written, [], deleted
    written += await _list_pass(writer, client, passes, False, live)
    return written, [SweepScope(archived=False)], deleted


async def _list_pass(
    writer: PageWriter,
    client: HubSpotClient,
    passes: _Passes,
    archived: bool,
    held: int | None,
    parent_id: str | None = None,
    *,
    moved: list[str] | None = None,
) -> int:
    """List one pass's ids, record them as seen and store what is not stored: rows written.
    `moved` collects the ids it shows that are stored live (an archived pass's)."""
    total = writer.job.total
    if total is not None and held is not None:
        # The ids listing shows the whole pass, the changes read among them.
        total = total - passes.shown.get(archived, 0) + held
        await writer.checkpoint(writer.job.cursor, total=total)
    content_type = writer.job.content_type
    ids = client.listed_ids(content_type, archived=archived, parent_id=parent_id)
    await _see_ids(writer, ids, moved)
    return await _store_unstored(writer, client)


async def _see_ids(
    writer: PageWriter, pages: AsyncIterator[list[str]], moved: list[str] | None = None
) -> None:
    """Record every id of an ids-only listing as seen by the job (progress: the new ones);
    with `moved`, collect those stored live."""
    async for ids in pages:
        await writer.see(ids)
        if moved is not None:
            async with writer.reading() as scoped:
                moved += await fetch_seen_stored_live(scoped, writer.job, ids)


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
        changed, scopes = 0, []
        for at, state in enumerate(left):
            later = sum(bounds[at + 1 :])
            written, swept = await self._parent(writer, client, state.hubspot_id, later)
            changed += written
            scopes += swept
        gone = sorted(stored.keys() - {s.hubspot_id for s in states})
        if todo or gone:
            log.info(
                "job %s: %s of %d changed table(s) read, of %d gone swept",
                job.id,
                job.content_type,
                len(todo),
                len(gone),
            )
        scopes += [SweepScope(prefix=f"{parent_id}:") for parent_id in gone]
        return ReadDone(tuple(scopes), changed)

    async def _parent(
        self, writer: PageWriter, client: HubSpotClient, parent_id: str, later: int
    ) -> tuple[int, list[SweepScope]]:
        """Read one changed parent's changed children and check its counts (`later`: what the
        parents after it count at most): (rows written, what to sweep)."""
        content_type = writer.job.content_type
        spec = client.spec(content_type)
        opening = await client.open_changes(content_type, self.since_ms, parent_id=parent_id)
        if opening.changed is not None:
            total = writer.job.processed + opening.changed + later
            await writer.checkpoint(writer.job.cursor, total=total)
        passes = await _read_pages(writer, client, self.since_ms, parent_id, opening)
        async with writer.reading() as scoped:
            held = await fetch_seen_children_present(scoped, writer.job.portal_id, content_type)
        found, swept = await _check_counts(
            writer, client, held.get(parent_id, PresentCounts(0, 0)), passes, parent_id
        )
        after = Cursor(spec.name, parent=parent_id, parent_done=True).encode()
        # The parent is done: what it showed is in the total exactly.
        await writer.checkpoint(after, total=writer.job.processed + later)
        return passes.written + found, swept


def _key(object_id: str) -> tuple[int, int, str]:
    return (0, int(object_id), "") if object_id.isdigit() else (1, 0, object_id)
