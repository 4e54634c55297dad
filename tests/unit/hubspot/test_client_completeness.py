"""A listing that may have missed objects is completed; unseen objects are asked about by id.

HubSpot's `after` cursors are offsets: what a deletion moves across a page boundary is never
listed. `pages(verify=True)` counts the type again at the end and, unless the listing saw
exactly that many objects with its totals holding still, lists again by creation time
(`sort=createdAt`, `createdAfter`), which no deletion shifts. `confirm` asks by id.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.cursor import Cursor
from smuves_sync.hubspot.listing import Page
from smuves_sync.hubspot.paging import Position
from tests.unit.hubspot.conftest import MakeClient, json_response

POSTS = "/cms/v3/blogs/posts"
EMPTY: dict[str, Any] = {"total": 0, "results": []}
# The FakeClock's start (2026-03-10 15:30 UTC) less the margin for HubSpot's clock (600 s).
SINCE = "2026-03-10T15:20:00.000Z"


def post(n: int, created_ms: int | None = None) -> dict[str, Any]:
    created = 1_700_000_000_000 + (created_ms if created_ms is not None else n * 1000)
    return {"id": str(n), "name": f"Post {n}", "slug": f"p-{n}", "created": created}


def body(total: int, results: list[dict[str, Any]], after: str | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"total": total, "results": results}
    if after is not None:
        answer["paging"] = {"next": {"after": after}}
    return answer


def sent(route: respx.Route) -> list[dict[str, str]]:
    return [dict(call.request.url.params) for call in route.calls]


async def collect(client: Any, **kw: Any) -> list[Page]:
    return [page async for page in client.pages("blog_post", **kw)]


def ids(pages: list[Page]) -> list[str]:
    return [item.hubspot_id for page in pages for item in page.items]


def posts_answering(answers: dict[tuple[Any, ...], dict[str, Any]]) -> Any:
    """By (archived, limit, after, createdAfter) of each request."""

    def handler(request: httpx.Request) -> httpx.Response:
        p = request.url.params
        key = (p.get("archived") == "true", p.get("limit"), p.get("after"), p.get("createdAfter"))
        return json_response(answers[key])

    return handler


async def test_a_whole_listing_is_counted_again_and_left_at_that(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    answers = {
        (False, "100", None, None): body(3, [post(1), post(2)], after="a2"),
        (False, "100", "a2", None): body(3, [post(3)]),
        (True, "100", None, None): EMPTY,
        (False, "1", None, None): body(3, [post(1)]),
        (False, "1", None, SINCE): EMPTY,  # none created since it began
        (True, "1", None, None): EMPTY,
    }
    route = router.get(POSTS).mock(side_effect=posts_answering(answers))

    pages = await collect(make_client(), verify=True)

    assert ids(pages) == ["1", "2", "3"]
    # Three pages, then per pass the count and (where there is any) what was created since:
    # an empty archived listing holds nothing created since either.
    assert [q.get("limit") for q in sent(route)] == ["100", "100", "100", "1", "1", "1"]
    assert not any(p.drifted for p in pages)


async def test_a_listing_whose_totals_moved_is_completed_by_creation_time(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # Post 1 went after the first page: the offset moved post 3 back, out of sight.
    answers = {
        (False, "100", None, None): body(4, [post(1), post(2)], after="a2"),
        (False, "100", "a2", None): body(3, [post(4)]),
        (True, "100", None, None): EMPTY,
        (False, "100", None, "keyset"): body(3, [post(2), post(3)], after="k"),
        (False, "100", None, "2023-11-14T22:13:22.999Z"): body(2, [post(3), post(4)]),
        (True, "100", None, "keyset"): EMPTY,
    }

    def handler(request: httpx.Request) -> httpx.Response:
        p = request.url.params
        keyset = "createdAfter" not in p and p.get("sort") == "createdAt"
        key = (p.get("archived") == "true", p.get("limit"), p.get("after"))
        return json_response(answers[(*key, "keyset" if keyset else p.get("createdAfter"))])

    route = router.get(POSTS).mock(side_effect=handler)

    pages = await collect(make_client(), verify=False)
    assert pages[-1].drifted and ids(pages) == ["1", "2", "4"]
    again = await collect(make_client(), cursor=pages[-1].cursor, listed=3, verify=True)

    assert ids(again) == ["2", "3", "3", "4"]
    keyset = [q for q in sent(route) if q.get("sort") == "createdAt"]
    assert keyset == [
        {"limit": "100", "sort": "createdAt"},
        {"limit": "100", "sort": "createdAt", "createdAfter": "2023-11-14T22:13:22.999Z"},
        {"limit": "100", "sort": "createdAt", "archived": "true"},
    ]
    # Each page of the second pass resumes on its own; the last says it is all done.
    states = [Cursor.decode(p.cursor, "blog_post") for p in again]
    assert all(state.recheck for state in states) and states[-1].done
    assert await collect(make_client(), cursor=again[-1].cursor, verify=True) == []


async def test_a_listing_that_saw_fewer_than_the_count_at_its_end_lists_again(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    answers = {
        (False, "100", None, None): body(2, [post(1), post(2)]),
        (True, "100", None, None): EMPTY,
        (False, "1", None, None): body(3, [post(1)]),  # one more by the end
        (True, "1", None, None): EMPTY,
    }

    def handler(request: httpx.Request) -> httpx.Response:
        p = request.url.params
        if p.get("sort") == "createdAt":
            return json_response(
                EMPTY if p.get("archived") else body(3, [post(1), post(2), post(3)])
            )
        return json_response(answers[(p.get("archived") == "true", p["limit"], None, None)])

    router.get(POSTS).mock(side_effect=handler)

    assert ids(await collect(make_client(), verify=True)) == ["1", "2", "1", "2", "3"]


async def test_a_page_created_within_one_millisecond_is_stepped_past(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    start = Cursor("blog_post", recheck=True).encode()
    same = [post(n, created_ms=5000) for n in range(1, 3)]

    def handler(request: httpx.Request) -> httpx.Response:
        after = request.url.params.get("createdAfter")
        if request.url.params.get("archived"):
            return json_response(EMPTY)
        if after is None:
            return json_response(body(3, same, after="x"))
        if after == "2023-11-14T22:13:24.999Z":  # one ms before: the same two again
            return json_response(body(3, same, after="x"))
        return json_response(body(1, [post(3, created_ms=6000)]))

    router.get(POSTS).mock(side_effect=handler)

    assert ids(await collect(make_client(), cursor=start)) == ["1", "2", "1", "2", "3"]


def test_cursors_keep_the_second_pass_and_what_the_listing_noticed() -> None:
    cursor = Cursor(
        "blog_post",
        archived=True,
        position=Position(created_after=1_700_000_000_000),
        recheck=True,
        part_total=12,
        drifted=True,
    )
    assert Cursor.decode(cursor.encode(), "blog_post") == cursor
    damaged = Cursor("blog_post").encode()[:3] + "eyJ0IjoiYmxvZ19wb3N0IiwicHQiOi0xfQ"
    with pytest.raises(InvalidInput):
        Cursor.decode(damaged, "blog_post")


# -- asking by id --------------------------------------------------------------------------


async def test_confirm_reads_batches_live_then_archived_and_what_neither_holds_is_gone(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    def batch(request: httpx.Request) -> httpx.Response:
        inputs = json.loads(request.content)["inputs"]
        archived = request.url.params.get("archived") == "true"
        held = {"1": False, "2": True}  # post 1 live, post 2 archived, post 3 gone
        found = [
            post(int(i)) | {"archivedAt": 1 if held[i] else 0}
            for i in inputs
            if held.get(i) is archived
        ]
        return json_response(
            {"status": "COMPLETE", "results": found, "startedAt": "x", "completedAt": "x"},
            status=200 if len(found) == len(inputs) else 207,
        )

    batches = router.post(f"{POSTS}/batch/read").mock(side_effect=batch)
    one = router.get(f"{POSTS}/3").mock(
        return_value=json_response({"status": "error", "message": "not found"}, status=404)
    )

    answer = await make_client().confirm("blog_post", ["1", "2", "3"])

    assert [(r.hubspot_id, r.archived) for r in answer.present] == [("1", False), ("2", True)]
    assert (answer.gone, answer.unknown) == (("3",), ())
    assert [json.loads(c.request.content)["inputs"] for c in batches.calls] == [
        ["1", "2", "3"],
        ["2", "3"],
    ]
    assert one.call_count == 0  # the two batch answers settled it


async def test_a_batch_read_answering_404_as_a_whole_is_not_taken_for_gone(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.post(f"{POSTS}/batch/read").mock(
        return_value=json_response({"status": "error", "message": "?"}, status=404)
    )
    router.get(f"{POSTS}/1").mock(return_value=json_response(post(1)))
    two = router.get(f"{POSTS}/2").mock(
        return_value=json_response({"status": "error", "message": "not found"}, status=404)
    )

    answer = await make_client().confirm("blog_post", ["1", "2"])

    assert [r.hubspot_id for r in answer.present] == ["1"] and answer.gone == ("2",)
    assert [c.request.url.params["archived"] for c in two.calls] == ["false", "true"]


async def test_rows_are_read_per_table_and_archived_ones_asked_for_by_id(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    rows = "/cms/v3/hubdb/tables/{table}/rows"
    reads = {
        table: router.post(rows.format(table=table) + "/batch/read").mock(
            return_value=json_response(
                {
                    "status": "COMPLETE",
                    "results": [{"id": "7", "name": "Row", "path": "row"}] if table == "10" else [],
                    "startedAt": "x",
                    "completedAt": "x",
                },
                status=207,
            )
        )
        for table in ("10", "20")
    }
    archived = router.get(rows.format(table="10") + "/8").mock(
        side_effect=lambda request: json_response(
            {"id": "8", "name": "Old", "path": "old"}
            if request.url.params["archived"] == "true"
            else {"status": "error", "message": "?"},
            status=200 if request.url.params["archived"] == "true" else 404,
        )
    )
    router.get(rows.format(table="20") + "/9").mock(
        return_value=json_response({"status": "error", "message": "?"}, status=404)
    )

    answer = await make_client().confirm("hubdb_row", ["10:7", "10:8", "20:9"])

    assert [(r.hubspot_id, r.archived) for r in answer.present] == [
        ("10:7", False),
        ("10:8", True),
    ]
    assert answer.gone == ("20:9",)
    assert [json.loads(c.request.content)["inputs"] for c in reads["10"].calls] == [["7", "8"]]
    assert "archived" not in reads["10"].calls.last.request.url.params
    assert [c.request.url.params["archived"] for c in archived.calls] == ["true"]


async def test_the_rows_of_a_table_that_is_gone_are_gone(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    missing = {"status": "error", "message": "no such table"}
    router.post("/cms/v3/hubdb/tables/30/rows/batch/read").mock(
        return_value=json_response(missing, status=404)
    )
    table = router.get("/cms/v3/hubdb/tables/30").mock(
        return_value=json_response(missing, status=404)
    )
    rows = router.get(path__regex=r"/cms/v3/hubdb/tables/30/rows/\d+")

    answer = await make_client().confirm("hubdb_row", ["30:1", "30:2"])

    assert (answer.present, answer.gone) == ((), ("30:1", "30:2"))
    assert (table.call_count, rows.call_count) == (1, 0)
