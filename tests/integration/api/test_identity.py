"""Who a token speaks for: `sub` always, its email only when the identity provider verified it.

The operator names a portal's owner by email (`smuves portal add --owner`); the person with
that email finds the portal after signing in, whatever the case of the letters, but only with
a token that says `email_verified: true`. An unverified email claim is never stored, so it can
neither take over nor later be matched by what the operator names.
"""

from __future__ import annotations

import uuid

import httpx

from smuves_sync.db import Database, Pool
from smuves_sync.db.portals import app_user_ensure
from tests.integration.api.conftest import make_token
from tests.support import query
from tests.support.factories import Factory


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _portals(client: httpx.AsyncClient, token: str) -> list[int]:
    response = await client.get("/v1/portals", headers=_bearer(token))
    assert response.status_code == 200, response.text
    return [p["id"] for p in response.json()["items"]]


async def test_a_verified_sign_in_takes_over_the_portal_invited_by_its_email(
    client: httpx.AsyncClient, db: Database, factory: Factory, admin_pool: Pool
) -> None:
    invited = await app_user_ensure(db, "Alice@Corp.example")
    await factory.portal(invited, portal_id=700)
    alice = uuid.uuid4()

    assert await _portals(client, make_token(alice, email="alice@CORP.example")) == [700]
    assert await query(admin_pool, "check_app_user", user_id=alice) == [
        {"id": alice, "email": "alice@corp.example"}
    ]
    assert await query(admin_pool, "check_app_user", user_id=invited) == []
    # Nobody else takes it over afterwards, verified or not.
    assert await _portals(client, make_token(uuid.uuid4(), email="alice@corp.example")) == []


async def test_an_unverified_email_links_nothing_and_is_not_stored(
    client: httpx.AsyncClient, db: Database, factory: Factory, admin_pool: Pool
) -> None:
    invited = await app_user_ensure(db, "ops@acme.example")
    await factory.portal(invited, portal_id=701)
    # False, no claim at all, or anything but the JSON boolean true ("true", 1).
    for verified in (False, "omit", "true", 1):
        mallory = uuid.uuid4()
        token = make_token(mallory, email="ops@acme.example", email_verified=verified)
        assert await _portals(client, token) == []
        [row] = await query(admin_pool, "check_app_user", user_id=mallory)
        assert row["email"] == f"{mallory}@users.invalid"
    assert await query(admin_pool, "check_app_user", user_id=invited) == [
        {"id": invited, "email": "ops@acme.example"}
    ]


async def test_an_unverified_claim_first_cannot_catch_the_operators_owner(
    client: httpx.AsyncClient, db: Database, factory: Factory
) -> None:
    mallory = uuid.uuid4()
    token = make_token(mallory, email="Ops@Acme.example", email_verified=False)
    assert await _portals(client, token) == []
    # The operator then names that email as a portal's owner: a new person, not mallory.
    owner = await app_user_ensure(db, "ops@acme.example")
    assert owner != mallory
    await factory.portal(owner, portal_id=702)
    assert await _portals(client, token) == []


async def test_one_person_whatever_the_case_of_the_email(
    client: httpx.AsyncClient, db: Database, factory: Factory
) -> None:
    alice = uuid.uuid4()
    token = make_token(alice, email="Alice@Corp.example")
    assert await _portals(client, token) == []
    # Alice signed in first; the operator names her with other capitals: the same user.
    assert await app_user_ensure(db, "ALICE@corp.EXAMPLE") == alice
    await factory.portal(alice, portal_id=703)
    assert await _portals(client, token) == [703]
