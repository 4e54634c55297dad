"""The changeset tables under the runtime logins: who may store a changeset and its items, and
what the database refuses whoever asks (an item forged into another portal's changeset)."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.changesets import (
    NewChangeset,
    NewItem,
    changeset_counts,
    changeset_create,
    changeset_get,
    changeset_items_add,
    changeset_items_of,
)
from smuves_sync.errors import DatabaseError, NotPermitted
from smuves_sync.models import ContentType
from tests.support.factories import Factory

PAGE = ContentType.SITE_PAGE


async def _member(factory: Factory, role: str) -> tuple[uuid.UUID, int]:
    user = await factory.user()
    portal = await factory.portal()
    await factory.member(portal, user, role)
    return user, portal


async def test_an_editor_stores_a_changeset_and_its_items(
    factory: Factory, api_login_pool: Pool
) -> None:
    user, portal = await _member(factory, "editor")
    api = Database(api_login_pool)
    async with api.as_user(user) as scoped:
        changeset = await changeset_create(scoped, NewChangeset(portal, PAGE, owner_id=user))
        stored = await changeset_items_add(
            scoped,
            changeset,
            [
                NewItem(
                    "site_page",
                    "1",
                    "pending",
                    3,
                    "2024-01-01T00:00:00Z",
                    {"htmlTitle": "new"},
                    {"htmlTitle": "old"},
                    warnings=["w"],
                ),
                NewItem("site_page", "2", "unchanged", 1),
                NewItem("site_page", "3", "invalid", reason="no such object"),
            ],
        )
    assert stored == 3
    async with api.as_user(user) as scoped:
        assert (await changeset_get(scoped, changeset.id)) == changeset
        items = await changeset_items_of(scoped, changeset.id)
        counts = await changeset_counts(scoped, changeset.id)
    assert [(i.hubspot_id, i.state, i.fields, i.warnings) for i in items] == [
        ("1", "pending", {"htmlTitle": "new"}, ("w",)),
        ("2", "unchanged", {}, ()),
        ("3", "invalid", {}, ()),
    ]
    assert counts["pending"] == 1 and counts["unchanged"] == 1 and counts["invalid"] == 1


async def test_a_viewer_reads_but_may_not_store(factory: Factory, api_login_pool: Pool) -> None:
    editor, portal = await _member(factory, "editor")
    viewer = await factory.user()
    await factory.member(portal, viewer, "viewer")
    api = Database(api_login_pool)
    with pytest.raises(NotPermitted):
        async with api.as_user(viewer) as scoped:
            await changeset_create(scoped, NewChangeset(portal, PAGE, owner_id=viewer))
    async with api.as_user(editor) as scoped:
        changeset = await changeset_create(scoped, NewChangeset(portal, PAGE, owner_id=editor))
    async with api.as_user(viewer) as scoped:
        assert await changeset_get(scoped, changeset.id) == changeset
        with pytest.raises(NotPermitted):
            await changeset_items_add(scoped, changeset, [NewItem("site_page", "1", "pending")])


async def test_an_editor_may_not_store_in_anothers_name_or_as_pushed(
    factory: Factory, api_login_pool: Pool
) -> None:
    user, portal = await _member(factory, "editor")
    other = await factory.user()
    api = Database(api_login_pool)
    with pytest.raises(NotPermitted):
        async with api.as_user(user) as scoped:
            await changeset_create(scoped, NewChangeset(portal, PAGE, owner_id=other))
    async with api.as_user(user) as scoped:
        changeset = await changeset_create(scoped, NewChangeset(portal, PAGE, owner_id=user))
    with pytest.raises(NotPermitted):
        async with api.as_user(user) as scoped:
            await changeset_items_add(scoped, changeset, [NewItem("site_page", "1", "applied")])


async def test_a_forged_item_of_another_portal_is_refused(
    factory: Factory, api_login_pool: Pool
) -> None:
    """An editor of two portals files an item of portal B under a changeset of portal A: the
    composite foreign key refuses it; and a changeset of a portal it is no member of is not
    even visible to attach to."""
    user = await factory.user()
    portal_a, portal_b = await factory.portal(), await factory.portal()
    await factory.member(portal_a, user, "editor")
    await factory.member(portal_b, user, "editor")
    stranger, portal_c = await _member(factory, "editor")
    api = Database(api_login_pool)
    async with api.as_user(user) as scoped:
        mine = await changeset_create(scoped, NewChangeset(portal_a, PAGE, owner_id=user))
    async with api.as_user(stranger) as scoped:
        theirs = await changeset_create(scoped, NewChangeset(portal_c, PAGE, owner_id=stranger))
    forged = dataclasses.replace(mine, portal_id=portal_b)
    with pytest.raises(DatabaseError, match="changeset_items_changeset_fkey"):
        async with api.as_user(user) as scoped:
            await changeset_items_add(scoped, forged, [NewItem("site_page", "1", "pending")])
    with pytest.raises(NotPermitted):
        async with api.as_user(user) as scoped:
            await changeset_items_add(scoped, theirs, [NewItem("site_page", "1", "pending")])
    async with api.as_user(stranger) as scoped:
        assert await changeset_items_of(scoped, theirs.id) == []
