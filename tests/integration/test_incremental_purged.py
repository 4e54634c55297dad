"""Purged objects, gone from both listings (emptied from HubSpot's recycle bin, a HubDB row
deleted), found by counting: count windows over creation time where a pass's count differs,
its ids listed instead when the purges are many and scattered, HubDB rows by their tables'
`rowCount`."""

from __future__ import annotations

import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, FakeControl
from tests.integration.test_incremental import exact, fetch, reads
from tests.support import Sync, fake_portal

# Many live site pages: listing their ids would cost 20 requests (and as many for a full read).
SPEC = fake_portal(7321, "2000,40,120,2,300,4,4,3,1", seed=12, archived_share=0.05)
PAGES = ContentType.SITE_PAGE

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def _ids(fake: FakeControl, portal: int, content_type: ContentType, *, archived: bool) -> list[str]:
    return [i.hubspot_id for i in fake.ground_truth(portal, content_type, archived=archived)]


def _requests(fake: FakeControl, portal: int, content_type: ContentType) -> int:
    return fake.stats(portal).by_content_type.get(content_type.value, 0)


async def _gone(sync: Sync, portal: int, content_type: ContentType) -> set[str]:
    return {i for i, _, _ in await sync.stored(portal, content_type, deleted=True)}


async def test_purged_pages_are_found_by_count_windows(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    live = _ids(fake, portal, PAGES, archived=False)
    purged = [live[100], live[1200]]
    assert fake.purge(portal, PAGES, purged) == 2

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(purged) <= await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    assert read["mode"] == "incremental" and read["deleted"] == 2
    assert read["count_window_requests"] > 0 and read["full_read_requests"] == 0
    # Counting down to a page twice, then one batch read: not the 20 pages of live ids.
    assert _requests(fake, portal, PAGES) <= 16


async def test_a_creation_and_a_purge_in_one_window_are_both_found(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    live = _ids(fake, portal, PAGES, archived=False)
    fake.advance(portal, Churn(changed=0, deleted=0, added=0.0005, archived=0, types=(PAGES,)))
    fake.purge(portal, PAGES, [live[-1]])  # the newest page before the creation
    after = _ids(fake, portal, PAGES, archived=False)
    assert len(after) == len(live)  # HubSpot's count is as it was

    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert live[-1] in await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    # The creation was read first, so the window stores one more than HubSpot counts.
    assert read["changed"] == 1 and read["deleted"] == 1
    assert read["count_window_requests"] > 0 and read["full_read_requests"] == 0


async def test_many_scattered_purges_list_the_ids_instead(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    first = await fetch(sync, portal)
    full = (await reads(sync, portal, first))[str(PAGES)]["requests"]
    live = _ids(fake, portal, PAGES, archived=False)
    purged = live[::40]
    fake.purge(portal, PAGES, purged)

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(purged) <= await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    assert read["deleted"] == len(purged)
    assert read["full_read_requests"] > 0 and read["count_window_requests"] <= 1
    # Never more than a full read plus its counting requests.
    assert _requests(fake, portal, PAGES) <= full + 2


async def test_purges_from_the_recycle_bin_are_found_once_the_type_changes(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    binned = _ids(fake, portal, PAGES, archived=True)
    fake.purge(portal, PAGES, binned[3:5])
    fake.archive(portal, PAGES, _ids(fake, portal, PAGES, archived=False)[7:8])

    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(binned[3:5]) <= await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    assert read["archived_pass_requests"] > 0 and read["count_window_requests"] > 0
    assert read["full_read_requests"] == 0


async def test_a_deleted_hubdb_row_is_found_by_its_tables_row_count(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    rows = _ids(fake, portal, ContentType.HUBDB_ROW, archived=False)
    table = rows[0].split(":")[0]
    fake.purge(portal, ContentType.HUBDB_ROW, [rows[2]])

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert rows[2] in await _gone(sync, portal, ContentType.HUBDB_ROW)
    read = (await reads(sync, portal, run))["hubdb_row"]
    assert read["deleted"] == 1
    # The tables listing (each table's rowCount), then only that table: its rows newest first,
    # their ids (one page) and the row asked about.
    assert _requests(fake, portal, ContentType.HUBDB_ROW) <= 5
    assert table


@pytest.mark.parametrize(
    "at",
    [
        # Between objects the archived pass's one answer listed: no boundary explains its
        # absence, and it is asked about live only.
        pytest.param((0.5,), id="between-listed"),
        # The newest archived page has no listed object after it, so the listing alone cannot
        # say that no boundary hid it; the live count, as stored, says that neither came back
        # live, and both are asked about archived only.
        pytest.param((0.5, 1.0), id="at-the-edge"),
    ],
)
async def test_a_few_purges_from_the_recycle_bin_take_one_batch_read(
    sync: Sync, at: tuple[float, ...]
) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    binned = _ids(fake, portal, PAGES, archived=True)
    # A purge and an archival later, the archived pass's count lists it whole, on one page.
    assert len(binned) <= 100
    purged = [binned[min(int(len(binned) * share), len(binned) - 1)] for share in at]
    fake.purge(portal, PAGES, purged)
    fake.archive(portal, PAGES, _ids(fake, portal, PAGES, archived=False)[7:8])

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(purged) <= await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    assert read["deleted"] == len(purged) and read["full_read_requests"] == 0
    # The live pass, what was archived since, the archived pass's count (its ids with it) and
    # one batch read of the purged pages.
    assert _requests(fake, portal, PAGES) == 4
    assert fake.stats(portal).by_status.get(207, 0) == 1


async def test_a_windows_first_page_settles_the_oldest_objects_it_lists(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    fake.archive(portal, PAGES, _ids(fake, portal, PAGES, archived=False)[:550])
    await fetch(sync, portal)
    binned = _ids(fake, portal, PAGES, archived=True)
    assert len(binned) > 600  # windows, not a listing of the archived ids, are the cheaper way
    # One purge among the oldest hundred, which the archived pass's count lists, one later.
    purged = [binned[10], binned[400]]
    fake.purge(portal, PAGES, purged)
    fake.archive(portal, PAGES, _ids(fake, portal, PAGES, archived=False)[7:8])

    fake.reset_stats()
    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert set(purged) <= await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    assert read["deleted"] == 2 and read["full_read_requests"] == 0
    # The archived pass's count (its oldest hundred compared: the first purge), the rest
    # counted down to a page of ids (the second: two counts), one batch read.
    assert read["count_window_requests"] <= 4


async def test_a_page_back_live_beside_a_purge_is_asked_about_live(sync: Sync) -> None:
    fake = sync.fake
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    binned = _ids(fake, portal, PAGES, archived=True)
    # Un-archived with `updated` left alone: only the live count (one more than stored) says
    # that one of the archived pass's missing pages may be live.
    back = fake.unarchive(portal, PAGES, [binned[-1]])
    purged = binned[len(binned) // 2]
    fake.purge(portal, PAGES, [purged])
    assert back == [binned[-1]]

    run = await fetch(sync, portal)
    await exact(sync, portal)
    assert await _gone(sync, portal, PAGES) >= {purged}
    assert back[0] not in await _gone(sync, portal, PAGES)
    read = (await reads(sync, portal, run))[str(PAGES)]
    # Asked about live before it was marked deleted: only the purged page was.
    assert read["deleted"] == 1 and read["full_read_requests"] == 0
