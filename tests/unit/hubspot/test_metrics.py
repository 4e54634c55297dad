"""The client counts every HubSpot answer and every 429 for the API's /metrics."""

from __future__ import annotations

import httpx
import respx
from prometheus_client import REGISTRY

from smuves_sync.hubspot.retry import RetryPolicy
from tests.unit.hubspot.conftest import MakeClient, json_response
from tests.unit.hubspot.fixtures import load

PATH = "/cms/v3/pages/site-pages"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_answers_and_429s_are_counted(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    before_ok = sample("smuves_hubspot_requests_total", status="200")
    before_429 = sample("smuves_hubspot_requests_total", status="429")
    before_policy = sample("smuves_hubspot_rate_limited_total", policy="TEN_SECONDLY_ROLLING")
    router.get(PATH).mock(
        side_effect=[
            json_response(load("rate_limit_ten_secondly_rolling"), 429),
            json_response(load("site_pages_1")),
        ]
    )
    await make_client(retry=RetryPolicy(max_attempts=1)).count("site_page")
    assert sample("smuves_hubspot_requests_total", status="200") == before_ok + 1
    assert sample("smuves_hubspot_requests_total", status="429") == before_429 + 1
    assert (
        sample("smuves_hubspot_rate_limited_total", policy="TEN_SECONDLY_ROLLING")
        == before_policy + 1
    )


async def test_transport_failures_are_counted_as_errors(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    before = sample("smuves_hubspot_requests_total", status="error")
    router.get(PATH).mock(
        side_effect=[httpx.ConnectError("refused"), json_response(load("site_pages_1"))]
    )
    await make_client(retry=RetryPolicy(max_attempts=2, initial_backoff_seconds=0)).count(
        "site_page"
    )
    assert sample("smuves_hubspot_requests_total", status="error") == before + 1
