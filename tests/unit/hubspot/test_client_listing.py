"""Counting and paging: both API versions, resume from any page, the archived pass, HubDB."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.listing import Page
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import BASE_URL, TOKEN, MakeClient, json_response
from tests.unit.hubspot.fixtures import load

Handler = Callable[[httpx.Request], httpx.Response]
EMPTY: dict[str, Any] = {"total": 0, "results": []}


def listing(pages: dict[tuple[bool, str | None], dict[str, Any]]) -> Handler:
    """Answer by (archived, after-or-offset), like a HubSpot list endpoint."""

    def handler(request: httpx.Request) -> httpx.Response:
        params = request.url.params
        key = params.get("after") or params.get("offset")
        return json_response(pages[(params.get("archived") == "true", key)])

    return handler


def site_pages(router: respx.MockRouter, path: str = "/cms/v3/pages/site-pages") -> respx.Route:
    return router.get(path).mock(
        side_effect=listing(
            {
                (False, None): load("site_pages_1"),
                (False, "Mg%3D%3D"): load("site_pages_2"),
                (True, None): load("site_pages_archived"),
            }
        )
    )


def hubdb(router: respx.MockRouter, prefix: str = "/cms/v3/hubdb") -> dict[str, respx.Route]:
    return {
        "tables": router.get(f"{prefix}/tables").mock(
            side_effect=listing(
                {(False, None): load("hubdb_tables"), (True, None): load("hubdb_tables_archived")}
            )
        ),
        "1001": router.get(f"{prefix}/tables/1001/rows").mock(
            side_effect=listing(
                {
                    (False, None): load("hubdb_rows_1001_1"),
                    (False, "NTAwMg"): load("hubdb_rows_1001_2"),
                    (True, None): load("hubdb_rows_1001_archived"),
                }
            )
        ),
        "1002": router.get(f"{prefix}/tables/1002/rows").mock(
            side_effect=listing(
                {
                    (False, None): load("hubdb_rows_1002_1"),
                    (False, "1"): load("hubdb_rows_1002_2"),
                    (True, None): load("hubdb_rows_empty"),
                }
            )
        ),
    }


async def collect(
    client: HubSpotClient, word: str, cursor: str | None = None, **kw: Any
) -> list[Page]:
    return [page async for page in client.pages(word, cursor=cursor, **kw)]


def ids(pages: list[Page]) -> list[str]:
    return [item.hubspot_id for page in pages for item in page.items]


async def test_count_asks_for_one_object_and_reads_total(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get("/cms/v3/blogs/posts").mock(return_value=json_response(load("blog_posts")))
    assert await make_client().count("blog_post") == 2
    request = route.calls.last.request
    assert dict(request.url.params) == {"limit": "1"}
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"


async def test_count_of_archived_objects(router: respx.MockRouter, make_client: MakeClient) -> None:
    site_pages(router)
    assert await make_client().count("site_page", archived=True) == 1


async def test_hubdb_rows_are_counted_from_the_tables_listing(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    assert await make_client().count("hubdb_row") == 5
    assert routes["tables"].call_count == 1
    assert routes["1001"].call_count == routes["1002"].call_count == 0
    assert routes["tables"].calls.last.request.url.params["limit"] == "1000"


async def test_pages_walk_live_then_archived_with_a_cursor_after_each(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = site_pages(router)
    pages = await collect(make_client(), "site_page")
    assert ids(pages) == ["80000000001", "80000000002", "80000000003", "80000000009"]
    assert [p.archived for p in pages] == [False, False, True]
    assert [i.archived for p in pages for i in p.items] == [False, False, False, True]
    sent = [dict(call.request.url.params) for call in route.calls]
    assert sent == [
        {"limit": "100"},
        {"limit": "100", "after": "Mg%3D%3D"},
        {"limit": "100", "archived": "true"},
    ]
    assert len({p.cursor for p in pages}) == 3


async def test_resuming_from_each_cursor_yields_exactly_the_rest(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    site_pages(router)
    client = make_client()
    pages = await collect(client, "site_page")
    everything = ids(pages)
    for index, page in enumerate(pages):
        rest = await collect(client, "site_page", cursor=page.cursor)
        done = sum(len(p.items) for p in pages[: index + 1])
        assert ids(rest) == everything[done:]


async def test_the_last_cursor_means_done(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = site_pages(router)
    client = make_client()
    last = (await collect(client, "site_page"))[-1].cursor
    calls = route.call_count
    assert await collect(client, "site_page", cursor=last) == []
    assert route.call_count == calls


async def test_the_archived_pass_can_be_left_out(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = site_pages(router)
    pages = await collect(make_client(), "site_page", include_archived=False)
    assert ids(pages) == ["80000000001", "80000000002", "80000000003"]
    assert all("archived" not in call.request.url.params for call in route.calls)


@pytest.mark.parametrize(
    ("word", "path"),
    [
        ("site_page", "/cms/pages/2026-03/site-pages"),
        ("landing_page", "/cms/pages/2026-03/landing-pages"),
        ("blog_post", "/cms/blogs/2026-03/posts"),
    ],
)
async def test_the_dated_api_version_uses_the_dated_paths(
    router: respx.MockRouter, make_client: MakeClient, word: str, path: str
) -> None:
    dated = Settings(hubspot_base_url=BASE_URL, hubspot_api_version="2026-03")
    route = router.get(path).mock(
        side_effect=listing({(False, None): load("landing_pages"), (True, None): EMPTY})
    )
    client = make_client(settings=dated)
    assert ids(await collect(client, word)) == ["80000000004"]
    assert await client.count(word) == 1
    assert route.call_count == 3


async def test_hubdb_on_the_dated_api_version(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    hubdb(router, prefix="/cms/hubdb/2026-03")
    client = make_client(
        settings=Settings(hubspot_base_url=BASE_URL, hubspot_api_version="2026-03")
    )
    assert await client.count("hubdb_row") == 5
    assert len(ids(await collect(client, "hubdb_row"))) == 6


async def test_hubdb_tables_have_an_archived_pass(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    pages = await collect(make_client(), "hubdb_table")
    assert ids(pages) == ["1001", "1002", "1003"]
    assert [i.archived for p in pages for i in p.items] == [False, False, True]
    assert routes["tables"].calls.last.request.url.params["archived"] == "true"


async def test_hubdb_rows_page_over_tables_then_rows_by_after_and_offset(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    pages = await collect(make_client(), "hubdb_row")
    assert ids(pages) == [
        "1001:5001",
        "1001:5002",
        "1001:5003",
        "1002:6001",
        "1002:6002",
        "1001:5009",  # the archived pass, table by table again
    ]
    assert [dict(c.request.url.params) for c in routes["1001"].calls] == [
        {"limit": "1000"},
        {"limit": "1000", "after": "NTAwMg"},
        {"limit": "1000", "archived": "true"},
    ]
    assert [dict(c.request.url.params) for c in routes["1002"].calls] == [
        {"limit": "1000"},
        {"limit": "1000", "offset": "1"},
        {"limit": "1000", "archived": "true"},
    ]
    assert [p.archived for p in pages] == [False, False, False, False, True, True]
    assert [i.archived for p in pages for i in p.items] == [False] * 5 + [True]
    # The tables are listed once, live tables only.
    assert [dict(c.request.url.params) for c in routes["tables"].calls] == [{"limit": "1000"}]


async def test_archived_hubdb_rows_are_counted_per_table(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    assert await make_client().count("hubdb_row", archived=True) == 1
    assert routes["1001"].calls.last.request.url.params["archived"] == "true"
    assert routes["1002"].calls.last.request.url.params["limit"] == "1"


async def test_hubdb_rows_resume_inside_a_table_and_between_tables(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    client = make_client()
    pages = await collect(client, "hubdb_row")
    everything = ids(pages)
    for index, page in enumerate(pages):
        routes["1001"].calls.clear()
        rest = await collect(client, "hubdb_row", cursor=page.cursor)
        done = sum(len(p.items) for p in pages[: index + 1])
        assert ids(rest) == everything[done:]
    # After the second page of table 1001 (its last), resuming starts table 1002 afresh.
    routes["1002"].calls.clear()
    await collect(client, "hubdb_row", cursor=pages[1].cursor)
    assert dict(routes["1002"].calls[0].request.url.params) == {"limit": "1000"}
    # After the first page of table 1002, resuming asks for offset 1 of that table only.
    routes["1001"].calls.clear()
    routes["1002"].calls.clear()
    rest = await collect(client, "hubdb_row", cursor=pages[2].cursor, include_archived=False)
    assert ids(rest) == ["1002:6002"]
    assert routes["1001"].call_count == 0
    assert dict(routes["1002"].calls[0].request.url.params) == {"limit": "1000", "offset": "1"}


async def test_hubdb_rows_resume_past_a_table_that_disappeared(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    routes = hubdb(router)
    client = make_client()
    first = (await collect(client, "hubdb_row"))[0].cursor  # inside table 1001
    only_1002 = load("hubdb_tables")
    only_1002["results"] = only_1002["results"][1:]
    routes["tables"].mock(side_effect=None, return_value=json_response(only_1002))
    rest = await collect(client, "hubdb_row", cursor=first, include_archived=False)
    assert ids(rest) == ["1002:6001", "1002:6002"]


async def test_a_cursor_of_another_type_or_damaged_is_refused(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    site_pages(router)
    client = make_client()
    cursor = (await collect(client, "site_page"))[0].cursor
    with pytest.raises(InvalidInput, match="blog_post"):
        await collect(client, "blog_post", cursor=cursor)
    for damaged in ["garbage", "c1.!!!", cursor[:-3], "c1.WzFd"]:
        with pytest.raises(InvalidInput):
            await collect(client, "site_page", cursor=damaged)
