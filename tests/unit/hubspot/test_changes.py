"""The listings of an incremental fetch (hubspot.changes) against answers HubSpot could give:
newest first in one request, a keyset by updatedBefore, an API that ignores the sort, a page
updated within one millisecond, ids only; the count of what changed (open_changes)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import respx

from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.listing import Page
from smuves_sync.hubspot.paging import iso_ms
from tests.unit.hubspot.conftest import MakeClient, json_response

PATH = "/cms/v3/pages/site-pages"
SINCE = 1_700_000_000_000


def page_object(object_id: int, updated_ms: int) -> dict[str, Any]:
    moment = datetime.fromtimestamp(updated_ms / 1000, tz=UTC)
    return {"id": str(object_id), "name": f"page {object_id}", "updatedAt": moment.isoformat()}


def newest_page(size: int) -> list[dict[str, Any]]:
    """A full page of objects changed after SINCE, newest first."""
    return [page_object(1000 + i, SINCE + 500 - i) for i in range(size)]


def body(objects: list[dict[str, Any]], total: int, more: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"total": total, "results": objects}
    if more:
        answer["paging"] = {"next": {"after": "x"}}
    return answer


async def read_all(client: Any, cursor: str | None = None) -> list[Page]:
    return [page async for page in client.changed_pages("site_page", SINCE, cursor)]


async def test_one_request_a_pass_when_fewer_than_a_page_changed(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    live = [page_object(3, SINCE + 30), page_object(2, SINCE + 20), page_object(1, SINCE - 5)]

    def answer(request: httpx.Request) -> httpx.Response:
        params = request.url.params
        assert "updatedAfter" not in params
        if params.get("archived") == "true":
            # What was archived since: nothing (the pass's own count is not asked).
            assert params["archivedAt__gt"] == iso_ms(SINCE) and "sort" not in params
            return json_response(body([], 0, more=False))
        assert params["sort"] == "-updatedAt"
        return json_response(body(live, 1200, more=True))

    route = router.get(PATH).mock(side_effect=answer)
    pages = await read_all(make_client())

    assert route.call_count == 2
    assert [[r.hubspot_id for r in p.items] for p in pages] == [["3", "2"], []]
    assert [(p.archived, p.counted) for p in pages] == [(False, 1200), (True, None)]
    assert Cursor.decode(pages[-1].cursor, "site_page").done


async def test_more_changes_than_a_page_are_read_by_updated_before(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    client = make_client()
    size = client.spec("site_page").page_size
    newest = newest_page(size)
    older = [page_object(2000, SINCE + 1), page_object(2001, SINCE - 1)]
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        if params.get("archived") == "true":
            return json_response(body([], 0, more=False))
        if "updatedBefore" in params:
            return json_response(body(older, 2, more=False))
        return json_response(body(newest, 5000, more=True))

    router.get(PATH).mock(side_effect=answer)
    pages = await read_all(client)

    oldest = SINCE + 500 - (size - 1)
    assert asked[1]["updatedBefore"] == iso_ms(oldest + 1)
    assert [len(p.items) for p in pages] == [size, 1, 0]
    assert pages[0].counted == pages[1].counted == 5000
    resumed = Cursor.decode(pages[0].cursor, "site_page")
    assert resumed.position.updated_before == oldest + 1 and resumed.part_total == 5000


async def test_the_opening_counts_what_changed_from_the_first_answers_and_asks_nothing_again(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    live = [page_object(3, SINCE + 30), page_object(2, SINCE + 20), page_object(1, SINCE - 5)]
    # Archived since the moment, though updated long before it (HubSpot's CMS keeps `updated`).
    archived = [page_object(7, SINCE - 9)]

    def answer(request: httpx.Request) -> httpx.Response:
        assert "updatedAfter" not in request.url.params
        if request.url.params.get("archived") == "true":
            return json_response(body(archived, 1, more=False))
        return json_response(body(live, 1200, more=True))

    route = router.get(PATH).mock(side_effect=answer)
    client = make_client()
    opening = await client.open_changes("site_page", SINCE)
    pages = [page async for page in client.changed_pages("site_page", SINCE, opening=opening)]

    assert opening.changed == 3  # two live, one archived
    assert route.call_count == 2  # the pages were the opening's answers
    assert [[r.hubspot_id for r in p.items] for p in pages] == [["3", "2"], ["7"]]
    assert [(p.archived, p.counted) for p in pages] == [(False, 1200), (True, None)]


async def test_what_was_archived_since_is_paged_by_its_cursor_with_the_filter_kept(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        if params.get("archived") != "true":
            return json_response(body([], 900, more=False))
        if params.get("after") == "a2":
            return json_response({"results": [page_object(5, SINCE - 50)], "total": 2})
        first = {"results": [page_object(4, SINCE - 40)], "total": 2}
        return json_response({**first, "paging": {"next": {"after": "a2"}}})

    router.get(PATH).mock(side_effect=answer)
    client = make_client()
    pages = await read_all(client)

    assert [[r.hubspot_id for r in p.items] for p in pages] == [[], ["4"], ["5"]]
    assert all(r.archived for p in pages[1:] for r in p.items)
    assert [a.get("archivedAt__gt") for a in asked[1:]] == [iso_ms(SINCE)] * 2
    # Resumed after the first archived page: its cursor, the filter still asked.
    resumed = [page async for page in client.changed_pages("site_page", SINCE, pages[1].cursor)]
    assert [[r.hubspot_id for r in p.items] for p in resumed] == [["5"]]
    assert asked[-1]["after"] == "a2" and asked[-1]["archivedAt__gt"] == iso_ms(SINCE)
    # Authors and tags name the moment `deletedAt`.
    assert client.spec("blog_author").archive_filter == "deletedAt"


async def test_more_changes_than_a_page_are_counted_by_their_second_page(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    client = make_client()
    size = client.spec("site_page").page_size
    newest = newest_page(size)
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        if "updatedAfter" in params:
            return json_response(body([newest[-1]], 321, more=False))
        if params.get("archived") == "true":
            return json_response(body([], 0, more=False))
        return json_response(body(newest, 5000, more=True))

    router.get(PATH).mock(side_effect=answer)
    opening = await client.open_changes("site_page", SINCE)

    # The first page's objects newer than its oldest, and the second page's count of the rest.
    assert opening.changed == (size - 1) + 321
    assert len(asked) == 3 and "updatedAfter" not in asked[0]
    oldest = SINCE + 500 - (size - 1)
    assert asked[1]["updatedAfter"] == iso_ms(SINCE)
    assert (asked[1]["limit"], asked[1]["updatedBefore"]) == (str(size), iso_ms(oldest + 1))
    # The listing reads the second page from the opening: no request more.
    pages = [p async for p in client.changed_pages("site_page", SINCE, opening=opening)]
    assert len(asked) == 3 and sum(len(p.items) for p in pages) == size + 1


async def test_an_opening_without_a_count_leaves_the_total_unknown(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    client = make_client()
    newest = newest_page(client.spec("site_page").page_size)

    def answer(request: httpx.Request) -> httpx.Response:
        if "updatedAfter" in request.url.params:
            return json_response({"results": []})  # no total
        return json_response(body(newest, 5000, more=True))

    router.get(PATH).mock(side_effect=answer)

    assert (await client.open_changes("site_page", SINCE)).changed is None


async def test_an_answer_not_newest_first_is_listed_by_updated_after_instead(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    client = make_client()
    size = client.spec("site_page").page_size
    # The sort ignored: oldest first, so the first page says nothing of what changed.
    unsorted = [page_object(i, SINCE - 1000 + i) for i in range(size)]
    changed = [page_object(9000, SINCE + 7)]
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        if params.get("archived") == "true":
            return json_response(body([], 0, more=False))
        if "updatedAfter" in params:
            assert params["sort"] == "updatedAt"
            return json_response(body(changed, 1, more=False))
        return json_response(body(unsorted, 3000, more=True))

    router.get(PATH).mock(side_effect=answer)
    pages = await read_all(client)

    assert [r.hubspot_id for p in pages for r in p.items] == ["9000"]
    assert asked[1]["updatedAfter"] == iso_ms(SINCE)
    # The archived pass asks what was archived since, which no sort orders.
    assert asked[2]["archivedAt__gt"] == iso_ms(SINCE)


async def test_ids_only(make_client: MakeClient, router: respx.MockRouter) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.params["property"] == "id"
        if request.url.params.get("after") == "p2":
            return json_response({"results": [{"id": "3"}], "total": 3})
        return json_response(
            {"results": [{"id": "1"}, {"id": 2}], "paging": {"next": {"after": "p2"}}}
        )

    router.get(PATH).mock(side_effect=answer)
    ids = [i async for page in make_client().listed_ids("site_page", archived=False) for i in page]
    assert ids == ["1", "2", "3"]
