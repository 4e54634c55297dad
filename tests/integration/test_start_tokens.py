"""Tokens for counting when a fetch starts (portal_token_for_member,
portal_token_for_operator): a member of the portal (the API, app.user_id) or the operator
(the login role) gets it; nobody else, whatever they name."""

from __future__ import annotations

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.portals import portal_token_for_member, portal_token_for_operator
from smuves_sync.errors import DatabaseRefused
from tests.support import query
from tests.support.factories import Factory

SEALED = b"sealed-token-bytes"


async def test_the_owner_and_a_member_get_the_token_and_nobody_else(
    factory: Factory, app_db: Database
) -> None:
    owner, viewer, stranger = await factory.user(), await factory.user(), await factory.user()
    portal = await factory.portal(owner, token_encrypted=SEALED, members=[viewer])
    others = await factory.portal(stranger, token_encrypted=b"someone-elses")

    for user in (owner, viewer):
        async with app_db.as_user(user) as scoped:
            assert await portal_token_for_member(scoped, portal) == SEALED
            assert await portal_token_for_member(scoped, others) is None
    async with app_db.as_user(stranger) as scoped:
        assert await portal_token_for_member(scoped, portal) is None
    # No user named: nothing, not even for a portal that exists.
    assert await portal_token_for_member(app_db, portal) is None


async def test_naming_a_non_member_by_hand_gets_no_token(factory: Factory, app_pool: Pool) -> None:
    owner, stranger = await factory.user(), await factory.user()
    portal = await factory.portal(owner, token_encrypted=SEALED)

    [row] = await query(app_pool, "start_token_as_user", user_id=stranger, portal_id=portal)
    assert row["token_encrypted"] is None
    [row] = await query(app_pool, "start_token_as_user", user_id=owner, portal_id=portal)
    assert row["token_encrypted"] == SEALED


async def test_the_operator_gets_any_portals_token(factory: Factory, db: Database) -> None:
    portal = await factory.portal(token_encrypted=SEALED)
    without = await factory.portal()

    assert await portal_token_for_operator(db, portal) == SEALED
    assert await portal_token_for_operator(db, without) is None
    assert await portal_token_for_operator(db, 424242) is None


async def test_neither_runtime_role_may_call_the_operators_function(
    factory: Factory, app_db: Database, worker_db: Database
) -> None:
    owner = await factory.user()
    portal = await factory.portal(owner, token_encrypted=SEALED)

    async with app_db.as_user(owner) as scoped:
        with pytest.raises(DatabaseRefused):
            await portal_token_for_operator(scoped, portal)
    async with worker_db.for_portal(portal) as scoped:
        with pytest.raises(DatabaseRefused):
            await portal_token_for_operator(scoped, portal)


async def test_a_worker_gets_no_token_by_naming_a_member(
    factory: Factory, worker_db: Database
) -> None:
    # A worker reads a token only with a live lease (portal_token), never as a user.
    owner = await factory.user()
    portal = await factory.portal(owner, token_encrypted=SEALED)

    async with worker_db.as_user(owner) as scoped:
        with pytest.raises(DatabaseRefused):
            await portal_token_for_member(scoped, portal)


async def test_only_the_api_role_may_execute_the_members_function(admin_pool: Pool) -> None:
    granted = {
        (r["name"], r["role"]): r["may"] for r in await query(admin_pool, "start_token_may_execute")
    }
    assert granted == {
        ("public.portal_token_for_member", "smuves_app"): True,
        ("public.portal_token_for_member", "smuves_worker"): False,
        ("public.portal_token_for_operator", "smuves_app"): False,
        ("public.portal_token_for_operator", "smuves_worker"): False,
    }
