"""The fetch handler: one content type of one portal, from HubSpot into content_items.

1. Decrypt the portal's token, which the database hands out only to the holder of the job's
   live lease (a portal whose token HubSpot refused is not asked again: the job fails with
   its run, `workers.failures`); make sure the record of what the listing saw matches the cursor
   (`sweep.prepare_seen`); decide how the type is read, in full or only what changed since
   its last completed fetch, and so by which strategy (`reads`: `full_read.FullRead`,
   `incremental.ChangesRead`, HubDB rows `incremental.ChildChangesRead`).
2. The strategy reads and stores through the job's one writer (`page_writer.PageWriter`):
   each page is ONE transaction scoped to the job (its portal, under its lease): the page's
   upsert (one statement) and the job's fenced checkpoint (cursor, processed). A lost lease
   raises `LeaseLost` inside it (and a write past it is refused by the database), so the
   page rolls back and the handler stops; a killed worker's successor resumes after the last
   committed page. Each page also records the ids it showed, for the deletion sweep.
3. At the end (the cursor says done): the objects stored as present that the read did not
   see are asked about by id, and only those HubSpot answers 404 for are marked deleted;
   then, in one transaction, the type's last confirmation, what the job cost and found
   (fetch_reads) and the job's completion (`sweep.sweep_and_finish`).
4. A read that fails adds the requests it made to the job's record (fetch_reads), as a
   completed one does at its end.

At most three pages are held at a time, so memory stays flat however large the portal is.
"""

from __future__ import annotations

import logging

from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError, PortalNeedsReconnect
from smuves_sync.hubspot.account import time_zone
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.page_writer import PageWriter
from smuves_sync.workers.reads import start_read, strategy
from smuves_sync.workers.sweep import prepare_seen, sweep_and_finish

log = logging.getLogger(__name__)


async def portal_token(ctx: JobContext) -> SecretStr:
    """The job's portal's token, decrypted: the database hands it only to the holder of a
    live lease on one of the portal's jobs; refused when HubSpot refused it already."""
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


async def handle_fetch(ctx: JobContext) -> None:
    """Fetch the job's content type into content_items, resumably; complete the job."""
    job = ctx.job
    token = await portal_token(ctx)
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
        writer = PageWriter(ctx, job)
        try:
            done = await strategy(read, spec).read(writer, client)
            await sweep_and_finish(writer, client, done)
        except Exception:
            await writer.record_requests(client.requests)
            raise
