"""A first listing checks its end against its start: `end = start + created - gone`.

As many objects created as deleted while a listing runs leave every count and every page's
`total` as they were, yet a deletion moved an object across a page boundary. The listing
keeps, in its cursor, when it began (less the margin for HubSpot's clock) and what each pass
counted on its first page; at its end it asks how many were created since (`createdAfter`).
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.cursor import Baseline, Cursor
from smuves_sync.hubspot.listing import Page
from smuves_sync.hubspot.paging import Position
from tests.unit.hubspot.conftest import MakeClient, json_response
from tests.unit.hubspot.test_client_completeness import EMPTY, POSTS, SINCE, body, post
from tests.unit.hubspot.test_client_listing import hubdb

CREATION = "createdAt"
SINCE_MS = 1_773_156_000_000  # SINCE in epoch milliseconds


def answering(pages: dict[str | None, dict[str, Any]], *, now: int, created: int) -> Any:
    """Blog posts: the live pages by `after`; counts (`limit=1`): `now` live, of which
    `created` created after SINCE; a keyset listing by creation time: posts 2-5."""

    def handler(request: httpx.Request) -> httpx.Response:
        p = request.url.params
        if p.get("archived") == "true":
            return json_response(EMPTY)
        if p.get("sort") == CREATION:
            return json_response(body(4, [post(n) for n in (2, 3, 4, 5)]))
        if p["limit"] == "1":
            if p.get("createdAfter") is None:
                return json_response(body(now, [post(2)]))
            assert p["createdAfter"] == SINCE
            return json_response(body(created, [post(5)] if created else []))
        return json_response(pages[p.get("after")])

    return handler


# Posts 1-4 at the start. After the first page, post 1 is deleted (post 3 moves back to the
# first page's place, unseen) and post 5 created: four posts still, every total says 4.
BALANCED = {
    None: body(4, [post(1), post(2)], after="a2"),
    "a2": body(4, [post(4), post(5)]),
}


async def collect(client: Any, **kw: Any) -> list[Page]:
    return [page async for page in client.pages("blog_post", **kw)]


def ids(pages: list[Page]) -> list[str]:
    return [item.hubspot_id for page in pages for item in page.items]


async def test_balanced_creations_and_deletions_are_caught_and_the_listing_completed(
    router: respx.MockRouter, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="smuves_sync.hubspot.client")
    route = router.get(POSTS).mock(side_effect=answering(BALANCED, now=4, created=1))

    pages = await collect(make_client(), verify=True)

    assert not any(page.drifted for page in pages)  # every total held still
    assert ids(pages) == ["1", "2", "4", "5", "2", "3", "4", "5"]  # post 3 by creation time
    assert [Cursor.decode(p.cursor, "blog_post").recheck for p in pages] == [False] * 3 + [True] * 2
    [message] = [r.getMessage() for r in caplog.records if "missed" in r.getMessage()]
    assert "4 live objects at its start and 1 created since, but 4 now" in message
    counts = [
        dict(c.request.url.params) for c in route.calls if c.request.url.params["limit"] == "1"
    ]
    assert counts == [{"limit": "1"}, {"limit": "1", "createdAfter": SINCE}]


async def test_an_undisturbed_listing_makes_no_second_pass(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    still = {None: body(4, [post(1), post(2)], after="a2"), "a2": body(4, [post(3), post(4)])}
    route = router.get(POSTS).mock(side_effect=answering(still, now=4, created=0))

    pages = await collect(make_client(), verify=True)

    assert ids(pages) == ["1", "2", "3", "4"]
    assert not any(c.request.url.params.get("sort") == CREATION for c in route.calls)
    # Two pages, the empty archived pass; the live count and what was created since, the
    # archived count (none now: none created since): one request more than a listing
    # checked by its counts alone.
    assert route.call_count == 6
    # Every cursor carries the baseline: the moment, and each pass's count once it began.
    baselines = [Cursor.decode(p.cursor, "blog_post").baseline for p in pages]
    assert baselines == [Baseline(SINCE_MS, live=4)] * 2 + [Baseline(SINCE_MS, 4, archived=0)]


async def test_a_listing_resumed_after_a_stop_keeps_its_baseline(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get(POSTS).mock(side_effect=answering(BALANCED, now=4, created=1))
    first = await collect(make_client(), verify=True)
    saved = first[0].cursor  # the job stopped after its first page

    rest = await collect(make_client(), cursor=saved, listed=2, verify=True)

    assert Cursor.decode(saved, "blog_post").baseline == Baseline(since=SINCE_MS, live=4)
    assert "3" in ids(rest)  # the second pass still follows


async def test_hubdb_rows_which_take_no_created_after_keep_no_baseline(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)

    pages = [page async for page in make_client().pages("hubdb_row", verify=True)]

    assert pages and all(Cursor.decode(p.cursor, "hubdb_row").baseline is None for p in pages)
    asked = [c.request.url.params for route in routes.values() for c in route.calls]
    assert not any("createdAfter" in params or "sort" in params for params in asked)


def released_cursor(**fields: Any) -> str:
    """A cursor as the release before baselines wrote it."""
    raw = json.dumps({"t": "blog_post", **fields}, separators=(",", ":"), sort_keys=True)
    return "c1." + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


async def test_a_cursor_saved_by_the_release_before_resumes_checked_by_its_counts(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get(POSTS).mock(side_effect=answering(BALANCED, now=4, created=1))
    saved = released_cursor(after="a2", pt=4)
    assert Cursor.decode(saved, "blog_post").baseline is None

    pages = await collect(make_client(), cursor=saved, listed=2, verify=True)

    # Begun without a baseline, it is checked as it was then: 4 listed, 4 counted.
    assert ids(pages) == ["4", "5"]
    assert not any("createdAfter" in c.request.url.params for c in route.calls)
    assert Cursor.decode(pages[-1].cursor, "blog_post").done


def test_the_baseline_survives_the_cursor_and_a_damaged_one_is_refused() -> None:
    cursor = Cursor(
        "blog_post",
        archived=True,
        position=Position(after="a9"),
        baseline=Baseline(since=1_700_000_000_000, live=12, archived=3),
    )
    assert Cursor.decode(cursor.encode(), "blog_post") == cursor
    started = Cursor("blog_post", baseline=Baseline(since=5))
    assert Cursor.decode(started.encode(), "blog_post") == started
    with pytest.raises(InvalidInput):
        Cursor.decode(released_cursor(bs=5, bl=-1), "blog_post")
    with pytest.raises(InvalidInput):
        Cursor.decode(released_cursor(bs="yesterday"), "blog_post")
