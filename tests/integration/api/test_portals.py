"""Connecting, listing and deleting portals."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from smuves_sync.db import Pool
from smuves_sync.models import JobStatus, RunStatus
from smuves_sync.token_crypto import TokenCipher
from tests.integration.api.conftest import SECRET_KEY, User
from tests.support import query
from tests.support.factories import Factory

TOKEN = "pat-na1-11111111-2222-3333-4444-555555555555"


async def test_connect_stores_the_token_encrypted_and_never_returns_it(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    response = await client.post(
        "/v1/portals", json={"id": 4242, "name": "Acme", "token": TOKEN}, headers=alice.headers
    )
    assert response.status_code == 201
    body = response.json()
    assert body["id"] == 4242 and body["name"] == "Acme" and body["role"] == "owner"
    assert body["owner_id"] == str(alice.id)
    assert TOKEN not in response.text
    [stored] = await query(admin_pool, "check_portal_token", portal_id=4242)
    encrypted = bytes(stored["token_encrypted"])
    assert TOKEN.encode() not in encrypted
    assert TokenCipher(SecretStr(SECRET_KEY)).decrypt(encrypted).get_secret_value() == TOKEN


async def test_reconnecting_an_owned_portal_replaces_name_and_token(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    first = {"id": 4242, "name": "Acme", "token": TOKEN}
    second = {"id": 4242, "name": "Acme Inc", "token": "pat-new"}
    assert (await client.post("/v1/portals", json=first, headers=alice.headers)).status_code == 201
    again = await client.post("/v1/portals", json=second, headers=alice.headers)
    assert again.status_code == 200 and again.json()["name"] == "Acme Inc"
    [stored] = await query(admin_pool, "check_portal_token", portal_id=4242)
    cipher = TokenCipher(SecretStr(SECRET_KEY))
    assert cipher.decrypt(bytes(stored["token_encrypted"])).get_secret_value() == "pat-new"


async def test_a_portal_connected_by_someone_else_is_409(
    client: httpx.AsyncClient, factory: Factory, alice: User, bob: User
) -> None:
    await factory.portal(alice.id, portal_id=4242, name="Alice's")
    response = await client.post(
        "/v1/portals", json={"id": 4242, "name": "Mine", "token": TOKEN}, headers=bob.headers
    )
    assert response.status_code == 409
    assert response.json()["code"] == "PORTAL_ALREADY_CONNECTED"
    # Nothing of Alice's portal is told, nor changed.
    assert "Alice" not in response.text
    listed = await client.get("/v1/portals", headers=alice.headers)
    assert listed.json()["items"][0]["name"] == "Alice's"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": 0, "name": "x", "token": TOKEN}, "id"),
        ({"id": "abc", "name": "x", "token": TOKEN}, "id"),
        ({"id": 1, "name": "", "token": TOKEN}, "name"),
        ({"id": 1, "name": "a\u0000b", "token": TOKEN}, "name"),
        ({"id": 1, "name": "x"}, "token"),
        ({"id": 1, "name": "x", "token": ""}, "token"),
        ({"id": 1, "name": "x", "token": TOKEN, "owner_id": "someone"}, "owner_id"),
        ({"id": 2**63, "name": "x", "token": TOKEN}, "id"),
    ],
    ids=[
        "id-zero",
        "id-text",
        "name-empty",
        "name-nul",
        "no-token",
        "token-empty",
        "extra",
        "id-huge",
    ],
)
async def test_a_bad_body_is_422_naming_the_field(
    client: httpx.AsyncClient, alice: User, body: dict[str, object], field: str
) -> None:
    response = await client.post("/v1/portals", json=body, headers=alice.headers)
    assert response.status_code == 422
    assert response.json()["code"] == "INVALID_INPUT"
    assert response.json()["message"].startswith(f"{field}: ")
    assert TOKEN not in response.text


async def test_malformed_json_is_422(client: httpx.AsyncClient, alice: User) -> None:
    response = await client.post(
        "/v1/portals",
        content=b'{"id": 1,',
        headers={**alice.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert response.json()["code"] == "INVALID_INPUT"


async def test_list_shows_own_and_shared_portals_with_the_role(
    client: httpx.AsyncClient, factory: Factory, alice: User, bob: User
) -> None:
    await factory.portal(alice.id, portal_id=11)
    await factory.portal(bob.id, portal_id=12, members=[])
    await factory.portal(bob.id, portal_id=13)
    await factory.member(13, alice.id, "editor")
    response = await client.get("/v1/portals", headers=alice.headers)
    assert response.status_code == 200
    assert [(p["id"], p["role"]) for p in response.json()["items"]] == [
        (11, "owner"),
        (13, "editor"),
    ]


async def test_delete_removes_the_portal_and_everything_of_it(
    client: httpx.AsyncClient, factory: Factory, admin_pool: Pool, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=21)
    run = await factory.run(21, owner=alice.id, status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING)
    await factory.content_item(run)
    response = await client.delete("/v1/portals/21", headers=alice.headers)
    assert response.status_code == 204 and response.content == b""
    assert await query(admin_pool, "check_portal_rows", portal_id=21) == [
        {"portals": 0, "runs": 0, "jobs": 0, "content": 0}
    ]
    again = await client.delete("/v1/portals/21", headers=alice.headers)
    assert again.status_code == 404


async def test_only_the_owner_may_delete(
    client: httpx.AsyncClient, factory: Factory, admin_pool: Pool, alice: User, bob: User
) -> None:
    await factory.portal(alice.id, portal_id=22, members=[bob.id])
    response = await client.delete("/v1/portals/22", headers=bob.headers)
    assert response.status_code == 403
    assert response.json()["code"] == "FORBIDDEN"
    [counts] = await query(admin_pool, "check_portal_rows", portal_id=22)
    assert counts["portals"] == 1


async def test_delete_of_a_bad_id_is_422(client: httpx.AsyncClient, alice: User) -> None:
    response = await client.delete("/v1/portals/-3", headers=alice.headers)
    assert response.status_code == 422
    assert response.json()["message"].startswith("portal_id: ")
