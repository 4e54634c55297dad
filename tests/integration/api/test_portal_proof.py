"""A portal is connected only with a token HubSpot says belongs to it, and only its owner may
reconnect it. HubSpot's answer (the fake's /account-info/v3/details) also gives its time zone."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from smuves_sync.api import create_app
from smuves_sync.db import Pool
from smuves_sync.settings import Settings
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import statement

TOKEN = "pat-na1-11111111-2222-3333-4444-555555555555"  # portal 4242's, in US/Eastern


async def _connect(
    client: httpx.AsyncClient, user: User, portal_id: int, token: str, name: str = "Mine"
) -> httpx.Response:
    body = {"id": portal_id, "name": name, "token": token}
    return await client.post("/v1/portals", json=body, headers=user.headers)


@pytest.mark.parametrize(
    ("portal_id", "token", "code", "message"),
    [
        (700, "pat-na1-squatters-own-portal", "TOKEN_PORTAL_MISMATCH", "portal 800, not 700"),
        (4242, "pat-na1-nobody-knows-this-one", "HUBSPOT_TOKEN_REJECTED", ""),
    ],
)
async def test_a_token_of_another_portal_or_one_hubspot_refuses_is_refused_and_nothing_stored(
    client: httpx.AsyncClient,
    admin_pool: Pool,
    alice: User,
    portal_id: int,
    token: str,
    code: str,
    message: str,
) -> None:
    response = await _connect(client, alice, portal_id, token)
    assert response.status_code == 422
    assert response.json()["code"] == code
    assert message in response.json()["message"]
    assert "pat-na1" not in response.text
    assert await query(admin_pool, "check_portal_rows", portal_id=portal_id) == [
        {"portals": 0, "runs": 0, "jobs": 0, "content": 0}
    ]


async def test_the_portals_time_zone_comes_from_hubspot(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    assert (await _connect(client, alice, 4242, TOKEN)).status_code == 201
    [stored] = await query(admin_pool, "check_portal_hands", portal_id=4242)
    assert stored["time_zone"] == "US/Eastern"
    assert stored["members"] == [f"{alice.email}:owner"]


async def test_hubspot_out_of_reach_is_502_and_stores_nothing(
    api_settings: Settings, api_pool: Pool, admin_pool: Pool, alice: User
) -> None:
    nowhere = api_settings.model_copy(update={"hubspot_base_url": "http://127.0.0.1:9"})
    app: FastAPI = create_app(nowhere, pool=api_pool)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        response = await _connect(client, alice, 4242, TOKEN)
    assert response.status_code == 502
    assert response.json()["code"] == "HUBSPOT_UNAVAILABLE"
    assert "127.0.0.1" not in response.text
    assert await query(admin_pool, "check_portal_token", portal_id=4242) == []


async def test_only_the_owner_reconnects_a_member_gets_409(
    client: httpx.AsyncClient, factory: Factory, admin_pool: Pool, alice: User, bob: User
) -> None:
    await factory.portal(alice.id, portal_id=4242, name="Alice's", members=[bob.id])
    before = await query(admin_pool, "check_portal_hands", portal_id=4242)
    response = await _connect(client, bob, 4242, TOKEN, name="Bob's now")
    assert response.status_code == 409
    assert response.json()["code"] == "PORTAL_ALREADY_CONNECTED"
    assert await query(admin_pool, "check_portal_hands", portal_id=4242) == before
    assert await query(admin_pool, "check_portal_token", portal_id=4242) == [
        {"token_encrypted": None}
    ]
    # The owner reconnects: the token is stored, the members are the ones the owner had.
    assert (await _connect(client, alice, 4242, TOKEN, name="Alice's")).status_code == 200
    [after] = await query(admin_pool, "check_portal_hands", portal_id=4242)
    assert after["members"] == before[0]["members"] and after["time_zone"] == "US/Eastern"


async def test_a_member_cannot_replace_the_token_behind_the_apis_back(
    factory: Factory, api_login_pool: Pool, admin_pool: Pool, alice: User, bob: User
) -> None:
    await factory.portal(alice.id, portal_id=4242, name="Alice's", members=[bob.id])
    async with api_login_pool.connection() as conn, conn.transaction():
        changed = await conn.execute(
            statement("as_user_replace_token"), {"user_id": bob.id, "portal_id": 4242}
        )
        assert changed.rowcount == 0
    [stored] = await query(admin_pool, "check_portal_hands", portal_id=4242)
    assert stored["name"] == "Alice's"
