"""The full read of a fetch job: count the type, list every object, sweep what it missed.

The type is counted (``limit=1`` requests) before the first page and the total stored on the
job, so progress is real from the start; a resumed job keeps the total it has. The pages come
from the job's saved cursor, the next one fetched while this one is stored, each stored with
the job's checkpoint (`PageWriter.page`). What is still to come (total less processed) is
passed to the listing, which also stops with `RunawayListing` if it runs far past that
count, and which counts the type again at its end and completes itself with a second pass
if it may have missed objects. An object that cannot be read or stored is recorded in
content_rejects with the page, and the page goes on (`processed` counts it: HubSpot counted
it too; an object a page lists twice counts once). The sweep then asks about every stored
object the listing did not show (`sweep.sweep_and_finish`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator

from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.listing import Page
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.sweep import ReadDone

log = logging.getLogger(__name__)


class FullRead:
    """Every object of the type, from the job's cursor."""

    async def read(self, writer: PageWriter, client: HubSpotClient) -> ReadDone:
        """Count the type if the job has no total, then store every page; the whole stored
        type is swept."""
        job = writer.job
        if job.total is None:
            total = await client.count(job.content_type)
            total += await client.count(job.content_type, archived=True)
            await writer.checkpoint(job.cursor, total=total)
            job = writer.job
            log.info(
                "job %s: %s of portal %s: %d objects",
                job.id,
                job.content_type,
                job.portal_id,
                total,
            )
        processed, changed = job.processed, 0
        # What is still to come tells the portal's budget how long this listing is, so the
        # longest of the portal's fetches gets the budget first.
        expected = max(job.total - processed, 0) if job.total is not None else None
        pages = _pages_ahead(client, job.content_type, job.cursor, expected, processed)
        try:
            async for page in pages:
                processed += page.objects
                changed += await writer.page(
                    page.items, page.rejects, cursor=page.cursor, processed=processed
                )
        finally:
            await pages.aclose()
        return ReadDone(changed=changed)


async def _pages_ahead(
    client: HubSpotClient,
    content_type: str,
    cursor: str | None,
    expected: int | None,
    listed: int,
) -> AsyncGenerator[Page, None]:
    """The type's pages from `cursor`, the next one fetched while the caller stores this one.

    HubSpot's paging is sequential (each page names the next), but storing a page need not
    wait for the next request: with one page in hand and one in flight a job runs at the pace
    of HubSpot (latency or rate limit), not of HubSpot plus Postgres. At most three pages are
    held at once. An error of the fetching side surfaces after the pages before it.
    """
    ahead: asyncio.Queue[Page | Exception | None] = asyncio.Queue(maxsize=1)

    async def fetch() -> None:
        try:
            pages = client.pages(
                content_type, cursor=cursor, expected=expected, listed=listed, verify=True
            )
            async for page in pages:
                await ahead.put(page)
        except Exception as error:  # handed to the consumer, which raises it in order
            await ahead.put(error)
            return
        await ahead.put(None)

    fetching = asyncio.create_task(fetch(), name="smuves-fetch-ahead")
    try:
        while (item := await ahead.get()) is not None:
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        fetching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await fetching
