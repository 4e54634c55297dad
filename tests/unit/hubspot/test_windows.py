"""Creation-time windows (hubspot.windows): a window's count brings its first page of ids, and
listing the window goes on from its second page instead of asking the first again."""

from __future__ import annotations

import httpx
import respx

from tests.unit.hubspot.conftest import MakeClient, json_response

PATH = "/cms/v3/pages/site-pages"


async def test_a_window_listed_after_its_count_asks_its_first_page_once(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    asked: list[dict[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        asked.append(params)
        assert params["property"] == "id" and params["createdBefore"]
        if params.get("after") == "p2":
            return json_response({"results": [{"id": "3"}], "total": 3})
        first = {"results": [{"id": "1"}, {"id": 2}], "total": 3}
        return json_response({**first, "paging": {"next": {"after": "p2"}}})

    router.get(PATH).mock(side_effect=answer)
    client = make_client()
    counted = await client.window("site_page", archived=False, start_ms=None, end_ms=5_000)
    assert counted.total == 3 and counted.ids is None and counted.first == ("1", "2")
    ids = await client.window_ids(
        "site_page", archived=False, start_ms=None, end_ms=5_000, opened=counted
    )
    assert ids == ["1", "2", "3"]
    assert [params.get("after") for params in asked] == [None, "p2"]


async def test_a_window_on_one_page_is_listed_by_its_count(
    make_client: MakeClient, router: respx.MockRouter
) -> None:
    route = router.get(PATH).mock(
        return_value=json_response({"results": [{"id": "7"}, {"id": "8"}], "total": 2})
    )
    counted = await make_client().window("site_page", archived=True, start_ms=10, end_ms=None)
    assert counted.ids == ("7", "8") and counted.after is None
    assert route.call_count == 1
    assert route.calls[0].request.url.params["createdAfter"] == "1970-01-01T00:00:00.009Z"
