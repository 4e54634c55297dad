"""Blog authors, tags, redirects and blogs fetched by a worker from the fake HubSpot, in either
API version: what is stored is what HubSpot serves, live and archived, with language groups."""

from __future__ import annotations

from typing import Literal

import pytest

from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import PortalSpec
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync, query
from tests.support.sync import truth_facts

NEW_TYPES = [
    ContentType.BLOG_AUTHOR,
    ContentType.BLOG_TAG,
    ContentType.URL_REDIRECT,
    ContentType.BLOG,
]
SPEC = PortalSpec(
    portal_id=7101,
    token=TOKEN,
    seed=21,
    blog_authors=30,
    blog_tags=260,  # three pages of a hundred
    url_redirects=140,
    blogs=9,
    archived_share=0.1,
)


pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


@pytest.mark.parametrize("version", ["v3", "2026-03"])
async def test_the_new_types_are_stored_as_hubspot_serves_them(
    version: Literal["v3", "2026-03"], sync: Sync
) -> None:
    fake, db, worker_db = sync.fake, sync.db, sync.worker_db
    portal = await sync.plant_portal()
    started = await start_fetch(worker_db, portal, NEW_TYPES)

    settings = sync.settings_with(hubspot_api_version=version)
    runner = Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=2, burst=True)
    await runner.run()

    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.COMPLETED
    for content_type in NEW_TYPES:
        truth = fake.ground_truth(SPEC.portal_id, content_type, with_data=True)
        assert any(item.archived for item in truth), content_type
        assert await sync.stored(portal, content_type) == truth_facts(truth)
        stored = {
            row["hubspot_id"]: row["translated_from_id"]
            for row in await query(
                db, "content_rows_of_type", portal_id=portal, content_type=content_type
            )
        }
        # translatedFromId as served (0 or "" for a primary; a redirect has none).
        served = {
            item.hubspot_id: str((item.data or {}).get("translatedFromId") or "") or None
            for item in truth
        }
        assert stored == served
        if content_type is not ContentType.URL_REDIRECT:
            assert any(stored.values()), f"{content_type}: no translations stored"
    # Each listing walked its pages: the tags took three live pages and one archived.
    assert fake.stats(SPEC.portal_id).by_content_type["blog_tag"] >= 4
