"""Bearer tokens: what is refused (401), who a token makes appear, and whose identity a pooled
connection carries after a request (nobody's)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from smuves_sync.api import create_app
from smuves_sync.db import DbRole, Pool, pool_for
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings
from tests.integration.api.conftest import User, make_token
from tests.support import query
from tests.support.factories import Factory

_USER = uuid.UUID("00000000-0000-4000-8000-000000000001")


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "Authorization: Bearer"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "Authorization: Bearer"),
        ({"Authorization": "Bearer"}, "Authorization: Bearer"),
        (_bearer("not-a-jwt"), "malformed"),
        (_bearer(make_token(_USER, secret="another-secret-of-sufficient-length-000")), "signature"),
        (_bearer(make_token(_USER, expires_in=timedelta(minutes=-5))), "expired"),
        (_bearer(make_token(_USER, exp=None)), "'exp'"),
        (_bearer(make_token("")), "'sub'"),
        (_bearer(make_token("not-a-uuid")), "not a user id"),
    ],
    ids=[
        "missing",
        "basic-scheme",
        "empty-bearer",
        "malformed",
        "wrong-signature",
        "expired",
        "no-exp",
        "empty-sub",
        "sub-not-uuid",
    ],
)
async def test_bad_tokens_are_401(
    client: httpx.AsyncClient, headers: dict[str, str], message: str
) -> None:
    response = await client.get("/v1/portals", headers=headers)
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "UNAUTHENTICATED"
    assert message in body["message"]
    assert response.headers["www-authenticate"] == "Bearer"


async def test_an_unsigned_token_is_401(client: httpx.AsyncClient) -> None:
    # alg "none": no signature at all; only HS256 is accepted.
    unsigned = make_token(_USER, secret="", algorithm="none")
    response = await client.get("/v1/portals", headers=_bearer(unsigned))
    assert response.status_code == 401


async def test_the_audience_is_checked_when_configured(
    api_settings: Settings, api_pool: Pool
) -> None:
    app = create_app(api_settings.model_copy(update={"jwt_audience": "frontend"}), pool=api_pool)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        wrong = await client.get("/v1/portals", headers=_bearer(make_token(_USER)))
        right = await client.get("/v1/portals", headers=_bearer(make_token(_USER, aud="frontend")))
    assert wrong.status_code == 401 and "audience" in wrong.json()["message"]
    assert right.status_code == 200


@pytest.mark.parametrize("missing", ["jwt_secret", "secret_key"])
def test_the_app_refuses_to_start_without_its_secrets(
    api_settings: Settings, api_pool: Pool, missing: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"SMUVES_{missing.upper()}"):
        create_app(api_settings.model_copy(update={missing: None}), pool=api_pool)


async def test_a_new_subject_becomes_a_user_on_first_request(
    client: httpx.AsyncClient, admin_pool: Pool
) -> None:
    newcomer = uuid.uuid4()
    response = await client.get(
        "/v1/portals", headers=_bearer(make_token(newcomer, email="new@example.com"))
    )
    assert response.status_code == 200 and response.json() == {"items": []}
    assert await query(admin_pool, "check_app_user", user_id=newcomer) == [
        {"id": newcomer, "email": "new@example.com"}
    ]


async def test_a_subject_without_a_usable_email_gets_a_placeholder(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    no_email, taken = uuid.uuid4(), uuid.uuid4()
    for user_id, email in ((no_email, None), (taken, alice.email)):
        token = make_token(user_id, email=email)
        assert (await client.get("/v1/portals", headers=_bearer(token))).status_code == 200
        [row] = await query(admin_pool, "check_app_user", user_id=user_id)
        assert row["email"] == f"{user_id}@users.invalid"


async def test_a_changed_email_claim_updates_the_user(
    client: httpx.AsyncClient, admin_pool: Pool, alice: User
) -> None:
    token = make_token(alice.id, email="alice.new@example.com")
    assert (await client.get("/v1/portals", headers=_bearer(token))).status_code == 200
    [row] = await query(admin_pool, "check_app_user", user_id=alice.id)
    assert row["email"] == "alice.new@example.com"


async def test_a_pooled_connection_keeps_no_identity_after_a_request(
    db_url: str, api_settings: Settings, factory: Factory, alice: User, bob: User
) -> None:
    # One connection for everything: each request reuses the previous request's connection.
    async with pool_for(db_url, role=DbRole.APP, min_size=1, max_size=1) as pool:
        app: FastAPI = create_app(api_settings, pool=pool)
        await factory.portal(alice.id, portal_id=31)
        await factory.portal(bob.id, portal_id=32)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://api"
        ) as client:
            seen_by_alice = await client.get("/v1/portals", headers=alice.headers)
            assert await query(pool, "check_session_user") == [{"user_id": ""}]
            seen_by_bob = await client.get("/v1/portals", headers=bob.headers)
            assert await query(pool, "check_session_user") == [{"user_id": ""}]
    assert [p["id"] for p in seen_by_alice.json()["items"]] == [31]
    assert [p["id"] for p in seen_by_bob.json()["items"]] == [32]
