"""The ids listing of one pass of an incremental read: every id of the pass recorded as seen,
what it shows and is not stored read by id and stored; the sweep then asks about what it did
not show (`sweep.sweep_and_finish`). The way deletions are found when nothing cheaper can be:
as many requests as the pass has pages of ids (reported as a full read's way)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

from smuves_sync.db.fetch_seen import fetch_seen_stored_live, fetch_seen_unstored
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.confirm import BATCH_READ_SIZE
from smuves_sync.workers.page_writer import PageWriter


async def list_pass(
    writer: PageWriter,
    client: HubSpotClient,
    archived: bool,
    held: int | None,
    shown: Mapping[bool, int],
    parent_id: str | None = None,
    *,
    moved: list[str] | None = None,
) -> int:
    """List one pass's ids, record them as seen and store what is not stored: rows written.
    `held`: HubSpot's count of the pass; `shown`: what the change listing showed of each pass;
    `moved` collects the ids it shows that are stored live (an archived pass's)."""
    total = writer.job.total
    if total is not None and held is not None:
        # The ids listing shows the whole pass, the changes read among them.
        total = total - shown.get(archived, 0) + held
        await writer.checkpoint(writer.job.cursor, total=total)
    content_type = writer.job.content_type
    ids = client.listed_ids(content_type, archived=archived, parent_id=parent_id)
    await _see_ids(writer, ids, moved)
    return await store_unstored(writer, client)


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


async def store_unstored(writer: PageWriter, client: HubSpotClient) -> int:
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
