"""Failures: typed errors that are not retried, retries of transient ones, malformed answers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from smuves_sync.content_fields import RAW_SIZE_CAP
from smuves_sync.errors import (
    ContentTypeUnavailable,
    HubSpotAuthError,
    HubSpotBadRequest,
    HubSpotError,
    HubSpotNotFound,
    HubSpotRetryableError,
    HubSpotUnreachable,
    MalformedResponse,
)
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import BASE_URL, PORTAL, FakeClock, MakeClient, json_response
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"


async def drain(client: HubSpotClient, word: str = "site_page") -> list[str]:
    return [i.hubspot_id async for page in client.pages(word) for i in page.items]


@pytest.mark.parametrize(
    ("status", "fixture", "error", "words"),
    [
        (400, "error_400", HubSpotBadRequest, "invalid"),
        (401, "error_401", HubSpotAuthError, "reconnect the portal"),
        (403, "error_403", ContentTypeUnavailable, "unavailable for the portal"),
        (404, "error_404", HubSpotNotFound, "no such resource"),
    ],
)
async def test_client_errors_are_typed_and_not_retried(
    router: respx.MockRouter,
    make_client: MakeClient,
    clock: FakeClock,
    status: int,
    fixture: str,
    error: type[HubSpotError],
    words: str,
) -> None:
    body = load(fixture)
    route = router.get(PATH).mock(return_value=json_response(body, status))
    with pytest.raises(error) as caught:
        await make_client().count("site_page")
    assert route.call_count == 1
    assert clock.sleeps == []
    exc = caught.value
    assert (exc.portal_id, exc.content_type, exc.status) == (PORTAL, "site_page", status)
    assert exc.correlation_id == body["correlationId"]
    assert exc.retryable is False
    text = str(exc)
    for part in (words, str(PORTAL), "site_page", body["correlationId"], body["message"][:30]):
        assert part in text


async def test_a_missing_scope_makes_the_type_unavailable_not_a_crash(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get("/cms/v3/hubdb/tables").mock(return_value=json_response(load("error_403"), 403))
    with pytest.raises(ContentTypeUnavailable, match="hubdb_row"):
        await drain(make_client(), "hubdb_row")


@pytest.mark.parametrize("status", [500, 502, 503, 504, 423, 477])
async def test_transient_statuses_are_retried_with_backoff(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock, status: int
) -> None:
    route = router.get(PATH).mock(
        side_effect=[
            json_response(load("error_500"), status),
            json_response(load("error_500"), status),
            json_response(load("site_pages_1")),
        ]
    )
    assert await make_client().count("site_page") == 3
    assert route.call_count == 3
    # Exponential from 0.5 s plus up to 0.5 s of jitter.
    assert len(clock.sleeps) == 2
    assert 0.5 <= clock.sleeps[0] <= 1.0
    assert 1.0 <= clock.sleeps[1] <= 1.5


async def test_retries_stop_at_max_attempts_with_the_last_error(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    route = router.get(PATH).mock(return_value=json_response(load("error_500"), 500))
    with pytest.raises(HubSpotRetryableError) as caught:
        await make_client().count("site_page")
    assert route.call_count == 4  # max_attempts of the test policy
    assert caught.value.retryable is True
    assert caught.value.status == 500
    assert caught.value.correlation_id == load("error_500")["correlationId"]
    # Capped at 4 s (plus jitter).
    assert max(clock.sleeps) <= 4.5


async def test_transport_errors_are_retried(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get(PATH).mock(
        side_effect=[
            httpx.ConnectError("connection refused"),
            httpx.ReadTimeout("timed out"),
            json_response(load("site_pages_1")),
        ]
    )
    assert await make_client().count("site_page") == 3
    assert route.call_count == 3


@pytest.mark.parametrize(
    ("failure", "cause"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "connection refused"),
        (httpx.Response(503), "HTTP 503"),
    ],
)
async def test_hubspot_unreachable_is_waited_out_up_to_the_bound_then_fails_in_words(
    router: respx.MockRouter,
    make_client: MakeClient,
    clock: FakeClock,
    failure: httpx.ConnectError | httpx.Response,
    cause: str,
) -> None:
    route = (
        router.get(PATH).mock(side_effect=failure)
        if isinstance(failure, Exception)
        else router.get(PATH).mock(return_value=failure)
    )
    settings = Settings(hubspot_base_url=BASE_URL, hubspot_outage_max_seconds=60)
    with pytest.raises(HubSpotUnreachable) as caught:
        await make_client(settings=settings, retry=RetryPolicy.from_settings(settings)).count(
            "site_page"
        )
    assert (caught.value.portal_id, caught.value.cause) == (PORTAL, cause)
    assert caught.value.retryable is False
    assert str(caught.value).startswith(f"HubSpot was unreachable for 1 min ({cause})")
    # Far more than the policy's 6 tries, each wait longer than the last up to the cap.
    assert clock.sleeps == [0.5, 1, 2, 4, 8, 16, 28.5]
    assert route.call_count == 7


async def test_other_unexpected_statuses_fail_without_retry(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get(PATH).mock(return_value=httpx.Response(405, text="Method Not Allowed"))
    with pytest.raises(HubSpotError, match="Method Not Allowed") as caught:
        await make_client().count("site_page")
    assert route.call_count == 1
    assert not caught.value.retryable


def _page(**changes: Any) -> dict[str, Any]:
    body = load("site_pages_1")
    body.update(changes)
    return body


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (
            httpx.Response(
                200, text="<html>maintenance</html>", headers={"content-type": "text/html"}
            ),
            "not JSON",
        ),
        (httpx.Response(200, content=b'{"results": ['), "not JSON"),
        (json_response([1, 2]), "JSON list"),
        (json_response({"total": 3}), "'results' is missing"),
        (json_response(_page(results={"0": {}})), "'results' is missing or not a list"),
        (json_response(_page(paging={"next": {}})), "neither 'after' nor 'offset'"),
        (json_response({"results": [], "paging": {"next": {"after": "z"}}}), "empty page"),
    ],
)
async def test_malformed_answers_raise_a_typed_error(
    router: respx.MockRouter, make_client: MakeClient, response: httpx.Response, message: str
) -> None:
    route = router.get(PATH).mock(return_value=response)
    with pytest.raises(MalformedResponse, match=message) as caught:
        await drain(make_client())
    assert route.call_count == 1
    assert (caught.value.portal_id, caught.value.content_type) == (PORTAL, "site_page")


@pytest.mark.parametrize(
    ("bad", "reason", "hubspot_id"),
    [
        (1, "a site_page result is int, not an object", None),
        ({"id": "1", "name": ["x"]}, "field 'name' is list, expected text", "1"),
        ({"name": "no id"}, "object has no usable 'id' (got NoneType)", None),
        ({"id": "a\x00b"}, "no usable 'id': it holds a NUL or a lone surrogate", None),
        ({"id": "9" * 1025}, "no usable 'id': it is 1,025 bytes long", None),
    ],
)
async def test_an_object_of_the_wrong_shape_is_set_aside_and_the_page_goes_on(
    router: respx.MockRouter, make_client: MakeClient, bad: Any, reason: str, hubspot_id: Any
) -> None:
    good = load("site_pages_1")["results"]

    def answer(request: httpx.Request) -> httpx.Response:
        archived = request.url.params.get("archived") == "true"
        results = [] if archived else [good[0], bad, good[1]]
        return json_response(_page(results=results, paging=None, total=len(results)))

    route = router.get(PATH).mock(side_effect=answer)
    pages = [page async for page in make_client().pages("site_page")]

    assert route.call_count == 2  # the live pass and the archived pass, nothing retried
    assert [i.hubspot_id for i in pages[0].items] == [good[0]["id"], good[1]["id"]]
    [rejected] = pages[0].rejects
    assert reason in rejected.reason
    assert rejected.hubspot_id == hubspot_id
    assert json.loads(rejected.raw) == bad
    assert rejected.size == len(rejected.raw)


async def test_a_rejected_object_keeps_its_first_bytes_only(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    huge = {"id": "7", "name": 7, "body": "\ud800" + "x" * (RAW_SIZE_CAP + 10)}

    def answer(request: httpx.Request) -> httpx.Response:
        archived = request.url.params.get("archived") == "true"
        body = _page(results=[] if archived else [huge], paging=None)
        # A lone surrogate can only travel as a JSON escape.
        return httpx.Response(200, content=json.dumps(body).encode())

    router.get(PATH).mock(side_effect=answer)
    [page, _] = [page async for page in make_client().pages("site_page")]

    [rejected] = page.rejects
    assert (rejected.hubspot_id, page.items) == ("7", ())
    assert len(rejected.raw) == RAW_SIZE_CAP and rejected.size > RAW_SIZE_CAP
    assert rejected.raw.startswith(b'{"id":"7","name":7,"body":"\\ud800xxx')


async def test_a_repeating_cursor_stops_the_listing(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # Every page says "next: after=Mg%3D%3D": a server stuck on one page.
    route = router.get(PATH).mock(return_value=json_response(load("site_pages_1")))
    with pytest.raises(MalformedResponse, match="repeats"):
        await drain(make_client())
    assert route.call_count == 2


async def test_a_cycle_of_cursors_stops_the_listing(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    def cycling(request: httpx.Request) -> httpx.Response:
        nxt = {"a": "b", "b": "c", "c": "a"}.get(request.url.params.get("after", ""), "a")
        return json_response(_page(paging={"next": {"after": nxt}}))

    route = router.get(PATH).mock(side_effect=cycling)
    with pytest.raises(MalformedResponse, match="'a' repeats"):
        await drain(make_client())
    assert route.call_count == 4


async def test_an_offset_that_goes_back_stops_the_listing(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get("/cms/v3/hubdb/tables").mock(return_value=json_response(load("hubdb_tables")))
    router.get("/cms/v3/hubdb/tables/1001/rows").mock(
        return_value=json_response(load("hubdb_rows_1002_1"))  # always "next: offset 1"
    )
    with pytest.raises(MalformedResponse, match="offset 1 does not move forward"):
        await drain(make_client(), "hubdb_row")


@pytest.mark.parametrize("total", [None, "3", -1, True, 2.5])
async def test_a_count_without_a_usable_total_is_malformed(
    router: respx.MockRouter, make_client: MakeClient, total: Any
) -> None:
    router.get(PATH).mock(return_value=json_response(_page(total=total)))
    with pytest.raises(MalformedResponse, match="'total'"):
        await make_client().count("site_page")


async def test_a_table_without_a_row_count_is_malformed(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    tables = load("hubdb_tables")
    tables["results"][1]["rowCount"] = "2"
    router.get("/cms/v3/hubdb/tables").mock(return_value=json_response(tables))
    with pytest.raises(MalformedResponse, match="1002: 'rowCount' is not a count"):
        await make_client().count("hubdb_row")
