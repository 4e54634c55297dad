"""The write path: never retried, lost answers unknown, 429s waited on, 207s mapped to inputs."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from smuves_sync.errors import HubSpotBadRequest, WriteOutcomeUnknown
from tests.unit.hubspot.conftest import FakeClock, MakeClient, json_response

PAGES = "/cms/v3/pages/site-pages"


def _page(page_id: str, **fields: object) -> dict[str, object]:
    return {"id": page_id, "name": f"page {page_id}", "updated": "2026-03-01T00:00:00Z", **fields}


@pytest.mark.parametrize(
    "failure",
    [
        httpx.Response(500, json={"message": "oops"}),
        httpx.Response(503, json={"message": "down"}),
        httpx.ReadTimeout("timed out"),
        httpx.RemoteProtocolError("dropped"),
    ],
)
async def test_a_lost_answer_is_unknown_and_never_sent_again(
    router: respx.MockRouter,
    make_client: MakeClient,
    failure: httpx.Response | Exception,
) -> None:
    route = router.post(f"{PAGES}/batch/update").mock(side_effect=[failure])
    writer = make_client().writer()
    with pytest.raises(WriteOutcomeUnknown) as caught:
        await writer.update("site_page", {"1": {"htmlTitle": "new"}})
    assert route.call_count == 1
    assert caught.value.retryable


async def test_a_429_waits_on_the_budget_and_goes_again(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    limited = json_response(
        {"policyName": "TEN_SECONDLY_ROLLING", "message": "slow down"},
        429,
        {"Retry-After": "2"},
    )
    done = json_response({"status": "COMPLETE", "results": [_page("1", htmlTitle="new")]})
    route = router.post(f"{PAGES}/batch/update").mock(side_effect=[limited, done])
    answer = await make_client().writer().update("site_page", {"1": {"htmlTitle": "new"}})
    assert route.call_count == 2
    assert answer.returned == ("1",)
    assert sum(clock.sleeps) >= 2


async def test_a_207_names_the_inputs_it_refused(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    body = {
        "status": "COMPLETE",
        "results": [_page("1", htmlTitle="a")],
        "numErrors": 1,
        "errors": [
            {
                "status": "error",
                "category": "VALIDATION_ERROR",
                "message": "slug is taken",
                "context": {"ids": ["2"]},
            }
        ],
    }
    route = router.post(f"{PAGES}/batch/update").mock(return_value=json_response(body, 207))
    answer = (
        await make_client()
        .writer()
        .update("site_page", {"1": {"htmlTitle": "a"}, "2": {"slug": "taken"}})
    )
    sent = json.loads(route.calls[0].request.content)
    assert sent == {"inputs": [{"id": "1", "htmlTitle": "a"}, {"id": "2", "slug": "taken"}]}
    assert answer.returned == ("1",)
    assert answer.failed == {"2": "slug is taken"}


async def test_a_whole_batch_400_is_raised_for_the_caller_to_split(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.post(f"{PAGES}/batch/update").mock(
        return_value=json_response({"message": "bad input"}, 400)
    )
    with pytest.raises(HubSpotBadRequest):
        await make_client().writer().update("site_page", {"1": {"slug": "a b"}})


async def test_batches_hold_at_most_100_inputs(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.post(f"{PAGES}/batch/update").mock(
        return_value=json_response({"status": "COMPLETE", "results": []})
    )
    changes = {str(i): {"name": f"n{i}"} for i in range(250)}
    await make_client().writer().update("site_page", changes)
    sizes = [len(json.loads(c.request.content)["inputs"]) for c in route.calls]
    assert sizes == [100, 100, 50]


async def test_redirects_are_patched_one_by_one(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    one = router.patch("/cms/v3/url-redirects/5").mock(return_value=json_response({"id": "5"}))
    answer = await make_client().writer().update("url_redirect", {"5": {"destination": "/x"}})
    assert one.call_count == 1
    assert json.loads(one.calls[0].request.content) == {"destination": "/x"}
    assert answer.returned == ("5",)


async def test_drafts_of_pages_and_rows_and_publishing(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    draft = router.patch(f"{PAGES}/1/draft").mock(return_value=json_response(_page("1")))
    push = router.post(f"{PAGES}/1/draft/push-live").mock(return_value=httpx.Response(204))
    rows = router.post("/cms/v3/hubdb/tables/7/rows/draft/batch/update").mock(
        return_value=json_response({"status": "COMPLETE", "results": [{"id": "12"}]})
    )
    publish = router.post("/cms/v3/hubdb/tables/7/draft/publish").mock(
        return_value=json_response({"id": "7"})
    )
    writer = make_client().writer()
    await writer.update_drafts("site_page", {"1": {"htmlTitle": "t"}})
    await writer.push_live("site_page", "1")
    answer = await writer.update_drafts("hubdb_row", {"7:12": {"values": {"price": 3}}})
    await writer.publish_table("7")
    assert (draft.call_count, push.call_count, publish.call_count) == (1, 1, 1)
    assert json.loads(rows.calls[0].request.content) == {
        "inputs": [{"id": "12", "values": {"price": 3}}]
    }
    assert answer.returned == ("7:12",)


async def test_reads_for_writing_live_and_drafts(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.post(f"{PAGES}/batch/read").mock(
        return_value=json_response({"status": "COMPLETE", "results": [_page("1")]})
    )
    router.get(f"{PAGES}/1/draft").mock(return_value=json_response(_page("1", htmlTitle="d")))
    router.post("/cms/v3/hubdb/tables/7/rows/draft/batch/read").mock(
        return_value=json_response(
            {"results": [{"id": "12", "values": {"price": 4}, "updatedAt": "2026-03-01T00:00:00Z"}]}
        )
    )
    writer = make_client().writer()
    live = await writer.read("site_page", ["1"])
    drafts = await writer.read_drafts("site_page", ["1"])
    rows = await writer.read_drafts("hubdb_row", ["7:12"])
    assert list(live) == ["1"]
    assert drafts["1"].raw["htmlTitle"] == "d"
    assert rows["7:12"].raw["values"] == {"price": 4}
