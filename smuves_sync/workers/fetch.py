"""The fetch handler: one content type of one portal, from HubSpot into content_items.

1. Decrypt the portal's token, which the database hands out only to the holder of the job's
   live lease (a portal whose token HubSpot refused is not asked again: the job fails with
   its run, `workers.failures`); make sure the record of what the listing saw matches the cursor
   (`sweep.prepare_seen`); decide how the type is read, in full or only what changed since
   its last completed fetch (`reads.start_read`). An incremental read is
   `incremental.read_changes` (HubDB rows: `read_changed_children`); the rest of this list is
   the full read.
2. Count the type (``limit=1`` requests) before the first page and store the total on the
   job, so progress is real from the start. A resumed job keeps the total it has.
3. Page through from the job's saved cursor, the next page fetched while this one is stored.
   Each page is ONE transaction scoped to the job (its portal, under its lease): the page's
   upsert (one statement) and the job's fenced checkpoint (cursor, processed). A lost lease
   raises `LeaseLost` inside it (and a write past it is refused by the database), so the
   page rolls back and the handler stops; a killed worker's successor resumes after the last
   committed page. The page's COMMIT does not wait for the WAL flush
   (`for_job(..., async_commit=True)`): a crash of Postgres can lose the last pages, each
   with its checkpoint, and the job reads them again; the job's completion commits
   synchronously, which makes every page before it durable. What is still to come (total
   less processed) is passed to the listing, which also stops with `RunawayListing` if it
   runs far past that count. An object that cannot be read or stored is recorded in
   content_rejects with the page, and the page goes on (`processed` counts it: HubSpot
   counted it too; an object a page lists twice counts once). Each page also records the ids
   it showed, for the deletion sweep. The listing counts the type again at its end and
   completes itself with a second pass if it may have missed objects.
4. At the end (the cursor says done): the objects stored as present that the listing did not
   see are asked about by id, and only those HubSpot answers 404 for are marked deleted;
   then, in one transaction, the type's last confirmation, what the job cost and found
   (fetch_reads) and the job's completion (`sweep.finish_fetch`).
5. A read that fails adds the requests it made to the job's record (fetch_reads), as a
   completed one does at its end.

At most three pages are held at a time, so memory stays flat however large the portal is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator

from pydantic import SecretStr

from smuves_sync.db.content import content_upsert_page
from smuves_sync.db.fetch_reads import fetch_read_add
from smuves_sync.errors import ConfigurationError, PortalNeedsReconnect
from smuves_sync.hubspot.account import time_zone
from smuves_sync.hubspot.client import HubSpotClient, Page
from smuves_sync.models import Job
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.incremental import read_changed_children, read_changes
from smuves_sync.workers.reads import start_read
from smuves_sync.workers.sweep import finish_fetch, prepare_seen

log = logging.getLogger(__name__)


async def _token(ctx: JobContext) -> SecretStr:
    found = await ctx.queue().portal_credentials(ctx.job)
    if found.token_rejected_at is not None:
        # HubSpot refused this token already: asking again would only be refused too.
        raise PortalNeedsReconnect(ctx.job.portal_id)
    if found.token_encrypted is None:
        raise ConfigurationError(
            f"portal {ctx.job.portal_id} has no HubSpot token stored; add one with "
            f"`smuves portal add {ctx.job.portal_id} --name NAME --token-stdin`"
        )
    # The portal's budget learns where its DAILY limit resets: midnight in its own zone.
    ctx.limits.budget(ctx.job.portal_id, timezone=time_zone(found.time_zone))
    return TokenCipher(ctx.settings.secret_key).decrypt(found.token_encrypted)


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


async def handle_fetch(ctx: JobContext) -> None:
    """Fetch the job's content type into content_items, resumably; complete the job."""
    job = ctx.job
    token = await _token(ctx)
    async with HubSpotClient(job.portal_id, token, ctx.settings, ctx.limits) as client:
        job = await prepare_seen(ctx, job)
        spec = client.spec(job.content_type)
        read = await start_read(ctx, job, spec)
        log.info(
            "job %s: %s of portal %s: %s read (%s)",
            job.id,
            job.content_type,
            job.portal_id,
            read.mode,
            read.reason,
        )
        try:
            if read.mode == "incremental" and spec.parent is not None:
                await read_changed_children(ctx, client, job, read)
            elif read.mode == "incremental":
                await read_changes(ctx, client, job, read)
            else:
                await _read_full(ctx, client, job)
        except Exception:
            await _record_requests(ctx, job, client.requests)
            raise


async def _record_requests(ctx: JobContext, job: Job, requests: int) -> None:
    """What a failing job cost HubSpot, added to its read as a completed one's is: the summary
    tells what the attempt asked for, not 0. Best effort: the failure itself is what counts."""
    try:
        async with ctx.db.for_job(job) as scoped:
            await fetch_read_add(scoped, job.id, requests=requests)
    except Exception as error:
        log.warning(
            "job %s: its %d HubSpot requests were not recorded (%s)", job.id, requests, error
        )


async def _read_full(ctx: JobContext, client: HubSpotClient, job: Job) -> None:
    """Count the type if the job has no total, list every object, sweep; completes the job."""
    portal_id, content_type = job.portal_id, job.content_type
    if job.total is None:
        total = await client.count(content_type)
        total += await client.count(content_type, archived=True)
        job = await ctx.queue().checkpoint(job, job.cursor, job.processed, total=total)
        log.info("job %s: %s of portal %s: %d objects", job.id, content_type, portal_id, total)
    processed, changed = job.processed, 0
    # What is still to come tells the portal's budget how long this listing is, so the
    # longest of the portal's fetches gets the budget first.
    expected = max(job.total - processed, 0) if job.total is not None else None
    pages = _pages_ahead(client, content_type, job.cursor, expected, processed)
    try:
        async for page in pages:
            processed += page.objects
            async with ctx.db.for_job(job, async_commit=True) as scoped:
                changed += await content_upsert_page(
                    scoped,
                    portal_id,
                    content_type,
                    job.run_id,
                    page.items,
                    rejected=page.rejects,
                    seen_by=job.id,
                )
                job = await ctx.queue(scoped).checkpoint(job, page.cursor, processed)
    finally:
        await pages.aclose()
    await finish_fetch(ctx, client, job, changed=changed)
