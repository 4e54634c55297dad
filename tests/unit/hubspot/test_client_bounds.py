"""Bounded answers: body size, Retry-After, and listings that never end."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import respx

from smuves_sync.errors import (
    HubSpotDailyLimitReached,
    HubSpotRetryableError,
    MalformedResponse,
    ResponseTooLarge,
    RunawayListing,
)
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.paging import runaway_limit
from smuves_sync.hubspot.responses import MAX_BODY_VALUES, json_values
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import BASE_URL, PORTAL, FakeClock, MakeClient, json_response
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"
LIMIT = 1_000_000
CHUNK = 64 * 1024


class Drip:
    """A body of `chunks` chunks of 64 KiB, produced only as the reader asks for them."""

    def __init__(self, chunks: int, prefix: bytes = b"") -> None:
        self.chunks = chunks
        self.prefix = prefix
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for index in range(self.chunks):
            self.pulled += 1
            yield (self.prefix if index == 0 else b"") + b" " * CHUNK


def small_bodies() -> Settings:
    return Settings(hubspot_base_url=BASE_URL, hubspot_max_response_bytes=LIMIT)


# -- body size -------------------------------------------------------------------------------


def test_the_body_limit_is_50_mb_by_default() -> None:
    assert Settings().hubspot_max_response_bytes == 50_000_000


async def test_an_answer_past_the_limit_fails_unretried_and_is_not_read_on(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # 64 MB of a page that never closes, as a broken proxy or a hostile server might send.
    body = Drip(1024, prefix=b'{"total": 3, "results": [')
    route = router.get(PATH).mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(ResponseTooLarge) as caught:
        await make_client(settings=small_bodies()).count("site_page")
    assert route.call_count == 1
    assert body.pulled <= LIMIT // CHUNK + 2
    error = caught.value
    assert (error.portal_id, error.content_type, error.status) == (PORTAL, "site_page", 200)
    assert error.retryable is False
    assert "larger than 1,000,000 bytes" in str(error)
    assert "SMUVES_HUBSPOT_MAX_RESPONSE_BYTES" in str(error)


async def test_a_declared_length_past_the_limit_is_refused_unread(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    body = Drip(32)
    headers = {"Content-Length": str(LIMIT + 1)}
    router.get(PATH).mock(return_value=httpx.Response(200, content=body, headers=headers))
    with pytest.raises(ResponseTooLarge):
        await make_client(settings=small_bodies()).count("site_page")
    assert body.pulled == 0


async def test_the_limit_counts_the_decompressed_body(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # 30 KB on the wire, 30 MB once unzipped.
    page = json.dumps({"total": 3, "results": [], "padding": " " * 30_000_000}).encode()
    zipped = gzip.compress(page)
    assert len(zipped) < LIMIT
    router.get(PATH).mock(
        return_value=httpx.Response(200, content=zipped, headers={"Content-Encoding": "gzip"})
    )
    with pytest.raises(ResponseTooLarge):
        await make_client(settings=small_bodies()).count("site_page")


async def test_an_answer_up_to_the_limit_is_read_whole(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    page = json.dumps(load("site_pages_1")).encode()
    exact = Settings(hubspot_base_url=BASE_URL, hubspot_max_response_bytes=len(page))
    router.get(PATH).mock(return_value=httpx.Response(200, content=page))
    assert await make_client(settings=exact).count("site_page") == 3
    one_less = Settings(hubspot_base_url=BASE_URL, hubspot_max_response_bytes=len(page) - 1)
    with pytest.raises(ResponseTooLarge):
        await make_client(settings=one_less).count("site_page")


async def test_a_huge_error_body_is_cut_and_the_error_keeps_its_meaning(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    error = json.dumps(load("error_500")).encode()[:-1] + b', "trace": "'
    flood = Drip(1024, prefix=error)
    route = router.get(PATH).mock(
        side_effect=[
            httpx.Response(503, content=flood),
            json_response(load("site_pages_1")),
        ]
    )
    assert await make_client(settings=small_bodies()).count("site_page") == 3
    assert route.call_count == 2  # a 503 is still retried
    assert flood.pulled <= 2


async def test_a_huge_error_body_still_names_its_correlation_id(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    headers = {"X-HubSpot-Correlation-Id": "c0ffee00-0000-4000-8000-000000000000"}
    router.get(PATH).mock(
        return_value=httpx.Response(500, content=Drip(1024, prefix=b"<html>"), headers=headers)
    )
    with pytest.raises(HubSpotRetryableError) as caught:
        await make_client(settings=small_bodies()).count("site_page")
    assert caught.value.correlation_id == headers["X-HubSpot-Correlation-Id"]


# -- objects per page ------------------------------------------------------------------------


async def first_page_error(
    router: respx.MockRouter, make_client: MakeClient, body: bytes
) -> MalformedResponse:
    """The error of a site_page listing whose first page is `body`; it is asked for once."""
    route = router.get(PATH).mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(MalformedResponse) as caught:
        _ = [page async for page in make_client().pages("site_page")]
    assert route.call_count == 1  # refused, not retried
    error = caught.value
    assert (error.portal_id, error.content_type, error.retryable) == (PORTAL, "site_page", False)
    return error


async def test_a_page_of_more_results_than_asked_for_is_malformed(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    template = load("site_pages_1")["results"][0]
    results = [{**template, "id": str(n)} for n in range(201)]
    body = json.dumps({"total": 201, "results": results}).encode()
    error = await first_page_error(router, make_client, body)
    assert "GET /cms/v3/pages/site-pages: 201 results on a page of 100 (at most 200" in str(error)


def test_values_are_counted_with_keys_and_never_short() -> None:
    assert json_values(b'{"a": 1, "b": [1, 2, 3]}') == 1 + 2 + 2 + 2 * 2  # exact: 9 values
    assert json_values(b"[]") == 2  # an empty container counts one more than it holds


async def test_a_page_of_too_many_values_is_refused_before_it_is_parsed(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # Commas and colons in text are no values: counted with the strings, then without them.
    page = load("site_pages_1")
    page.pop("paging", None)
    page["results"][0]["htmlTitle"] = 'a, "b": c\\, ' * (MAX_BODY_VALUES // 2)
    text = json.dumps(page).encode()
    assert json_values(text) > MAX_BODY_VALUES
    # 2.3 MB of empty objects inside one page object: a few results, millions of values.
    tiny = b"{}," * (MAX_BODY_VALUES // 2)
    values = b'{"total": 1, "results": [{"id": "1", "n": [' + tiny + b"{}]}]}"
    route = router.get(PATH)
    route.side_effect = [httpx.Response(200, content=body) for body in (text, values)]

    [read] = [p async for p in make_client().pages("site_page", include_archived=False)]
    assert read.items[0].raw["htmlTitle"] == page["results"][0]["htmlTitle"]
    with pytest.raises(MalformedResponse) as caught:
        _ = [p async for p in make_client().pages("site_page")]

    assert route.call_count == 2  # refused, not retried
    assert "the body holds more than 2,000,000 JSON values, the most a page is parsed with" in str(
        caught.value
    )


async def test_a_page_nested_deeper_than_any_parser_reads_is_malformed(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    deep = b"[" * 5000 + b"]" * 5000
    error = await first_page_error(router, make_client, b'{"results": [' + deep + b"]}")
    assert "the body nests JSON deeper than the parsers read" in str(error)


# -- Retry-After ---------------------------------------------------------------------------


def _429(policy: str, retry_after: str) -> httpx.Response:
    body = load(f"rate_limit_{policy.lower()}")
    return json_response(body, 429, {"Retry-After": retry_after})


def test_a_short_window_pause_is_capped_at_an_hour_by_default() -> None:
    assert Settings().hubspot_max_retry_after_seconds == 3600


@pytest.mark.parametrize("policy", ["TEN_SECONDLY_ROLLING", "SECONDLY"])
@pytest.mark.parametrize("retry_after", ["86400", "1e12", "Fri, 01 Jan 2100 00:00:00 GMT"])
async def test_a_short_window_retry_after_is_capped(
    router: respx.MockRouter,
    make_client: MakeClient,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    policy: str,
    retry_after: str,
) -> None:
    sent: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(clock.elapsed)
        return _429(policy, retry_after) if len(sent) == 1 else json_response(load("site_pages_1"))

    router.get(PATH).mock(side_effect=handler)
    with caplog.at_level(logging.WARNING, logger="smuves_sync.hubspot.client"):
        assert await make_client().count("site_page") == 3
    assert sent[1] - sent[0] == pytest.approx(3600)
    assert "SMUVES_HUBSPOT_MAX_RETRY_AFTER_SECONDS" in caplog.text


async def test_the_short_window_cap_is_a_setting(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    router.get(PATH).mock(
        side_effect=[_429("TEN_SECONDLY_ROLLING", "900"), json_response(load("site_pages_1"))]
    )
    settings = Settings(hubspot_base_url=BASE_URL, hubspot_max_retry_after_seconds=120)
    assert await make_client(settings=settings).count("site_page") == 3
    assert sum(clock.sleeps) == pytest.approx(120)


async def test_a_daily_park_waits_for_the_reset_however_far_within_two_days(
    router: respx.MockRouter, make_client: MakeClient, clock: FakeClock
) -> None:
    router.get(PATH).mock(return_value=_429("DAILY", str(47 * 3600)))
    with pytest.raises(HubSpotDailyLimitReached) as caught:
        await make_client().count("site_page")
    # Not cut to the short-window cap of an hour.
    assert caught.value.resets_at == clock.now() + timedelta(hours=47)


@pytest.mark.parametrize(
    "retry_after", [str(49 * 3600), str(3 * 365 * 86400), "1e12", "Fri, 01 Jan 2100 00:00:00 GMT"]
)
async def test_a_daily_reset_further_than_two_days_is_refused_for_the_next_midnight(
    router: respx.MockRouter,
    make_client: MakeClient,
    caplog: pytest.LogCaptureFixture,
    retry_after: str,
) -> None:
    router.get(PATH).mock(return_value=_429("DAILY", retry_after))
    with (
        caplog.at_level(logging.WARNING, logger="smuves_sync.hubspot.client"),
        pytest.raises(HubSpotDailyLimitReached) as caught,
    ):
        await make_client().count("site_page")
    # The fake clock stands at 2026-03-10 15:30 UTC; the portal's zone is UTC.
    assert caught.value.resets_at == datetime(2026, 3, 11, tzinfo=UTC)
    assert "refused as malformed" in caplog.text


# -- listings that never end ---------------------------------------------------------------


def test_the_runaway_limit_is_twice_the_count_or_ten_pages_more() -> None:
    assert runaway_limit(1000, 100) == 2000
    assert runaway_limit(10, 100) == 1010
    assert runaway_limit(0, 1000) == 10_000
    assert runaway_limit(None, 100) == 10_000_000


def endless(total: int | None, *, pages: int = 60) -> Callable[[httpx.Request], httpx.Response]:
    """A site-page listing that says `total` but hands out a fresh cursor with every full page
    of 100 (only giving up after `pages` pages, so that a client without a bound finishes)."""
    template = load("site_pages_1")["results"][0]

    def handler(request: httpx.Request) -> httpx.Response:
        start = int(request.url.params.get("after", "0"))
        results = [{**template, "id": str(90_000_000 + n)} for n in range(start, start + 100)]
        body: dict[str, object] = {"results": results}
        if total is not None:
            body["total"] = total
        if start // 100 < pages - 1:
            body["paging"] = {"next": {"after": str(start + 100)}}
        return json_response(body)

    return handler


async def stopped(client: HubSpotClient, expected: int | None = None) -> tuple[int, RunawayListing]:
    """How many objects the listing handed out before it was stopped, and why it was."""
    handed_out = 0
    with pytest.raises(RunawayListing) as caught:
        async for page in client.pages("site_page", include_archived=False, expected=expected):
            handed_out += len(page.items)
    return handed_out, caught.value


async def test_a_cursor_that_never_ends_is_stopped_past_twice_the_count(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    route = router.get(PATH).mock(side_effect=endless(1000))
    handed_out, error = await stopped(make_client(), expected=1000)
    # 2,000 objects pass; the page that would make 2,100 is not handed out.
    assert handed_out == 2000
    assert route.call_count == 21
    assert (error.portal_id, error.content_type, error.retryable) == (PORTAL, "site_page", False)
    assert "2,100 objects against HubSpot's count of 1,000" in str(error)
    assert "stopped past 2,000" in str(error)


async def test_a_small_count_gets_ten_pages_of_slack(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get(PATH).mock(side_effect=endless(10))
    assert (await stopped(make_client(), expected=10))[0] == 1000


async def test_without_an_expected_count_the_listings_own_total_bounds_it(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get(PATH).mock(side_effect=endless(1500))
    assert (await stopped(make_client()))[0] == 3000


async def test_without_any_count_a_generous_absolute_cap_stops_it(
    router: respx.MockRouter, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("smuves_sync.hubspot.paging.UNCOUNTED_MAX_OBJECTS", 2500)
    router.get(PATH).mock(side_effect=endless(None))
    handed_out, error = await stopped(make_client())
    assert handed_out == 2500
    assert "no count from HubSpot" in str(error)


async def test_growth_within_the_margin_is_listed_whole(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    # Counted 300; 1,300 were created while the listing ran (the most ten pages allow).
    router.get(PATH).mock(side_effect=endless(300, pages=13))
    client = make_client()
    pages = [p async for p in client.pages("site_page", include_archived=False, expected=300)]
    assert sum(len(p.items) for p in pages) == 1300
