"""Account details: the portal a token belongs to and its time zone, on both API versions."""

from __future__ import annotations

from datetime import UTC
from typing import Literal
from zoneinfo import ZoneInfo

import pytest
import respx

from smuves_sync.errors import MalformedResponse, TokenPortalMismatch, TokenRejected
from smuves_sync.hubspot.account import time_zone
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import BASE_URL, PORTAL, TOKEN, MakeClient, json_response
from tests.unit.hubspot.fixtures import load


@pytest.mark.parametrize(
    ("version", "path"),
    [("v3", "/account-info/v3/details"), ("2026-03", "/account-info/2026-03/details")],
)
async def test_the_account_of_a_token_is_read_from_its_version(
    router: respx.MockRouter,
    make_client: MakeClient,
    version: Literal["v3", "2026-03"],
    path: str,
) -> None:
    route = router.get(path).mock(return_value=json_response(load("account_details")))
    settings = Settings(hubspot_base_url=BASE_URL, hubspot_api_version=version)
    details = await make_client(settings=settings).verify_portal()
    assert (details.portal_id, details.time_zone) == (PORTAL, "US/Eastern")
    assert route.calls.last.request.headers["Authorization"] == f"Bearer {TOKEN}"


async def test_a_token_of_another_portal_is_a_mismatch(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get("/account-info/v3/details").mock(
        return_value=json_response({**load("account_details"), "portalId": 800})
    )
    with pytest.raises(TokenPortalMismatch, match="belongs to portal 800, not 700") as caught:
        await make_client(portal_id=700).verify_portal()
    assert caught.value.code == "TOKEN_PORTAL_MISMATCH"
    assert TOKEN not in str(caught.value)


@pytest.mark.parametrize(("status", "fixture"), [(401, "error_401"), (403, "error_403")])
async def test_a_refused_token_is_rejected(
    router: respx.MockRouter, make_client: MakeClient, status: int, fixture: str
) -> None:
    router.get("/account-info/v3/details").mock(return_value=json_response(load(fixture), status))
    with pytest.raises(TokenRejected, match=f"HTTP {status}"):
        await make_client().verify_portal()


@pytest.mark.parametrize(
    "body",
    [
        {"timeZone": "UTC"},
        {"portalId": "4242", "timeZone": "UTC"},
        {"portalId": True, "timeZone": "UTC"},
        {"portalId": -1, "timeZone": "UTC"},
        {"portalId": 4242},
        {"portalId": 4242, "timeZone": 5},
    ],
)
async def test_an_answer_of_the_wrong_shape_is_malformed(
    router: respx.MockRouter, make_client: MakeClient, body: dict[str, object]
) -> None:
    router.get("/account-info/v3/details").mock(return_value=json_response(body))
    with pytest.raises(MalformedResponse):
        await make_client().verify_portal()


async def test_a_time_zone_nobody_knows_is_taken_as_utc(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    body = {**load("account_details"), "timeZone": "Mars/Olympus_Mons"}
    router.get("/account-info/v3/details").mock(return_value=json_response(body))
    assert (await make_client().verify_portal()).time_zone == "UTC"


def test_stored_time_zones_become_tzinfo() -> None:
    assert time_zone("US/Eastern") == ZoneInfo("US/Eastern")
    for unknown in (None, "", "UTC", "Nowhere/Special", "../../etc/passwd"):
        assert time_zone(unknown) is UTC
