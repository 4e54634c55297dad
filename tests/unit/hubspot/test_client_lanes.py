"""A listing is one lane of the portal's budget, telling it how much the listing has to go."""

from __future__ import annotations

import httpx
import respx

from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from tests.unit.hubspot.conftest import PORTAL, MakeClient, json_response
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"


def watched_site_pages(router: respx.MockRouter, limits: RateLimitRegistry) -> list[list[int]]:
    """Serve the site-page fixtures; note the open lanes' remaining work at each request."""
    budget = limits.budget(PORTAL)
    seen: list[list[int]] = []
    bodies = {
        (False, None): load("site_pages_1"),
        (False, "Mg%3D%3D"): load("site_pages_2"),
        (True, None): load("site_pages_archived"),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append([lane.remaining for lane in budget.lanes()])
        params = request.url.params
        return json_response(bodies[(params.get("archived") == "true", params.get("after"))])

    router.get(PATH).mock(side_effect=handler)
    return seen


async def test_the_callers_expected_count_sets_the_listings_remaining_requests(
    router: respx.MockRouter, make_client: MakeClient, limits: RateLimitRegistry
) -> None:
    seen = watched_site_pages(router, limits)
    # 302 objects at 100 a page: 4 requests and a closing one (5). A request that goes counts
    # itself off; each page's objects set the estimate again (300, then 299 left: 4).
    pages = [page async for page in make_client().pages("site_page", expected=302)]
    assert len(pages) == 3
    assert seen == [[4], [3], [3]]
    assert limits.budget(PORTAL).lanes() == ()


async def test_without_an_expected_count_the_listings_total_is_used(
    router: respx.MockRouter, make_client: MakeClient, limits: RateLimitRegistry
) -> None:
    seen = watched_site_pages(router, limits)
    pages = [page async for page in make_client().pages("site_page")]
    assert len(pages) == 3
    # Unknown at first (1, sent: 0); the first page says 3 in all, 2 seen: 1 page and a
    # closing one (2, less the one sent).
    assert seen == [[0], [1], [0]]


async def test_a_listing_left_early_closes_its_lane(
    router: respx.MockRouter, make_client: MakeClient, limits: RateLimitRegistry
) -> None:
    watched_site_pages(router, limits)
    pages = make_client().pages("site_page", expected=1000)
    await anext(pages)
    assert len(limits.budget(PORTAL).lanes()) == 1
    await pages.aclose()
    assert limits.budget(PORTAL).lanes() == ()


async def test_concurrent_listings_have_a_lane_each_and_counts_none(
    router: respx.MockRouter, make_client: MakeClient, limits: RateLimitRegistry
) -> None:
    seen = watched_site_pages(router, limits)
    first = make_client().pages("site_page", expected=500)
    second = make_client().pages("site_page", expected=5000)
    await anext(first)
    await anext(second)
    await make_client().count("site_page")
    # After their first page (2 objects): 498 and 4,998 left, less the request each sent.
    assert sorted(seen[-1]) == [6, 51]
    await first.aclose()
    await second.aclose()
