"""What an incremental read asks and no more: a change listing of a type whose archiving moves
`updated` that counts what is stored live plus its creations skips the archived pass (nothing
left the live one); one that counts otherwise does not."""

from __future__ import annotations

import pytest

from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import Churn, FakeControl
from smuves_sync.workers.runner import Runner
from tests.integration.test_incremental import exact, fetch, reads
from tests.support import Sync, fake_portal

# site pages, landing pages, posts, tables, rows per table, authors, tags, redirects, blogs
SPEC = fake_portal(7322, "2000,40,120,3,300,4,4,300,1", seed=13, archived_share=0.05)
ROWS, REDIRECTS = ContentType.HUBDB_ROW, ContentType.URL_REDIRECT

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def _requests(fake: FakeControl, portal: int, content_type: ContentType) -> int:
    return fake.stats(portal).by_content_type.get(content_type.value, 0)


def _ids(fake: FakeControl, portal: int, content_type: ContentType, *, archived: bool) -> list[str]:
    return [i.hubspot_id for i in fake.ground_truth(portal, content_type, archived=archived)]


async def test_changed_rows_with_nothing_deleted_skip_their_archived_pass(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    fake.advance(portal, Churn(changed=0.05, deleted=0, added=0, archived=0, types=(ROWS,)))

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    read = (await reads(sync, portal, run))[str(ROWS)]
    assert read["mode"] == "incremental" and read["changed"] > 0
    # Each changed table's rows newest first, one request: their count is what is stored live,
    # so none was archived or deleted, and the table's archived rows are not asked.
    assert _requests(fake, portal, ROWS) == 3


async def test_changed_redirects_with_nothing_gone_skip_their_archived_pass(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    fake.advance(portal, Churn(changed=0.05, deleted=0, added=0.01, archived=0, types=(REDIRECTS,)))

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert (await reads(sync, portal, run))[str(REDIRECTS)]["changed"] > 0
    assert _requests(fake, portal, REDIRECTS) == 1


async def test_a_redirect_archived_beside_one_created_is_stored_archived(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    live = len(_ids(fake, portal, REDIRECTS, archived=False))
    fake.advance(
        portal, Churn(changed=0, deleted=0, added=0.004, archived=0.004, types=(REDIRECTS,))
    )
    assert len(_ids(fake, portal, REDIRECTS, archived=False)) == live  # the count as it was

    run = await fetch(sync, portal)
    # The creation is listed as changed and not stored: stored live plus it is one more than
    # HubSpot counts, so something left and the archived pass is asked.
    await exact(sync, portal)
    read = (await reads(sync, portal, run))[str(REDIRECTS)]
    assert read["changed"] == 2


async def test_the_rows_job_reads_the_tables_its_runs_tables_job_listed(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert (await reads(sync, portal, run))[str(ROWS)]["mode"] == "incremental"
    # The tables job's one answer held every table: the rows job asks nothing of its own.
    assert _requests(fake, portal, ContentType.HUBDB_TABLE) == 1
    assert _requests(fake, portal, ROWS) == 0
    # What it reads was listed when the tables job's listing began: the next fetch reads what
    # changed since then.
    began = {t: r["listing_started_at"] for t, r in (await reads(sync, portal, run)).items()}
    assert began[str(ROWS)] <= began[str(ContentType.HUBDB_TABLE)]

    # A run without a tables job lists the tables itself, and still finds what changed.
    fake.advance(portal, Churn(changed=0.05, deleted=0, added=0, archived=0, types=(ROWS,)))
    fake.reset_stats()
    await start_fetch(sync.worker_db, portal, [ROWS])
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=1, burst=True
    ).run()
    assert await sync.stored(portal, ROWS) == sync.truth(portal, ROWS)
    assert _requests(fake, portal, ContentType.HUBDB_TABLE) == 1
