"""Deletions where HubSpot shows them: its CMS deletes a page, post, author or tag by archiving
it without moving `updated`. An incremental fetch finds what was archived since by its archive
moment, brings back what was un-archived, and confirms a live object that left the listing."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeControl
from tests.integration.test_incremental import exact, fetch, reads
from tests.support import Sync, fake_portal

# Many live site pages beside few archived ones: listing the live ids would cost 15 requests.
SPEC = fake_portal(7311, "1500,60,150,1,5,24,24,5,2", seed=9, archived_share=0.05)
ARCHIVING = (
    ContentType.SITE_PAGE,
    ContentType.LANDING_PAGE,
    ContentType.BLOG_POST,
    ContentType.BLOG_AUTHOR,
    ContentType.BLOG_TAG,
)

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def _ids(fake: FakeControl, portal: int, content_type: ContentType, *, archived: bool) -> list[str]:
    items = fake.ground_truth(portal, content_type, archived=archived)
    return [item.hubspot_id for item in items]


def _requests(fake: FakeControl, portal: int, content_type: ContentType) -> int:
    return fake.stats(portal).by_content_type.get(content_type.value, 0)


async def _stored_archived(sync: Sync, portal: int, content_type: ContentType) -> set[str]:
    return {i for i, _, archived in await sync.stored(portal, content_type) if archived}


async def test_archived_objects_are_found_by_their_archive_moment(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    archived: dict[ContentType, list[str]] = {}
    for content_type in ARCHIVING:
        live = _ids(fake, portal, content_type, archived=False)
        archived[content_type] = fake.archive(portal, content_type, live[1:4])
        assert len(archived[content_type]) == 3
    updated_before = {i.hubspot_id: i.updated_at for i in fake.ground_truth(portal, "site_page")}

    fake.reset_stats()
    run = await fetch(sync, portal)
    read = await reads(sync, portal, run)
    await exact(sync, portal)
    for content_type in ARCHIVING:
        assert set(archived[content_type]) <= await _stored_archived(sync, portal, content_type)
        assert read[str(content_type)]["mode"] == "incremental"
        # The live pass, what was archived since and, something having changed, the archived
        # pass's whole count (objects purged from the recycle bin show there): no ids listed.
        assert _requests(fake, portal, content_type) == 3, content_type
    # HubSpot left their `updated` where it was.
    truth = {i.hubspot_id: i.updated_at for i in fake.ground_truth(portal, "site_page")}
    assert all(truth[i] == updated_before[i] for i in archived[ContentType.SITE_PAGE])


async def test_archived_and_unarchived_alike_leave_no_count_changed(sync: Sync) -> None:
    # As many objects archived as un-archived, none of them with `updated` moved: every count
    # is as it was, so only the archive moment shows what happened.
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    moved: dict[ContentType, tuple[list[str], list[str]]] = {}
    for content_type in ARCHIVING:
        back = fake.unarchive(
            portal, content_type, _ids(fake, portal, content_type, archived=True)[:1]
        )
        live = [i for i in _ids(fake, portal, content_type, archived=False) if i not in back]
        gone = fake.archive(portal, content_type, live[:1])
        assert len(back) == len(gone) == 1
        moved[content_type] = (back, gone)

    fake.reset_stats()
    run = await fetch(sync, portal)
    read = await reads(sync, portal, run)
    await exact(sync, portal)
    for content_type, (back, gone) in moved.items():
        stored_archived = await _stored_archived(sync, portal, content_type)
        assert set(gone) <= stored_archived and not set(back) & stored_archived, content_type
        assert read[str(content_type)]["mode"] == "incremental"
    # The short archived listing settles it, never the live one.
    assert _requests(fake, portal, ContentType.SITE_PAGE) <= 7


async def test_unarchived_objects_come_back_live_without_listing_the_live_ids(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    pages = ContentType.SITE_PAGE
    back = fake.unarchive(portal, pages, _ids(fake, portal, pages, archived=True)[:4])
    assert len(back) == 4

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert not set(back) & await _stored_archived(sync, portal, pages)
    read: dict[str, Any] = (await reads(sync, portal, run))[str(pages)]
    assert read["mode"] == "incremental" and read["changed"] >= 4
    # Two passes, the archived count, its ids (one page), the four asked about: not the 15
    # pages of live ids.
    assert _requests(fake, portal, pages) <= 6


@pytest.mark.hubspot(SPEC, ten_second_limit=None, clock_skew_seconds=-1200)
async def test_a_page_archived_before_the_moment_is_confirmed_archived_in_the_same_run(
    sync: Sync,
) -> None:
    # HubSpot's clock trails ours by more than the overlap: it dates the archival before the
    # moment the read asks from, so no filter finds it. The live count does.
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    pages = ContentType.SITE_PAGE
    gone = fake.archive(portal, pages, _ids(fake, portal, pages, archived=False)[5:7])

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(gone) <= await _stored_archived(sync, portal, pages)
    read = (await reads(sync, portal, run))[str(pages)]
    assert read["mode"] == "incremental" and read["changed"] == 2
    # Its batch read, live then archived, after the archived pass's ids: no live ids listed.
    assert _requests(fake, portal, pages) <= 7
