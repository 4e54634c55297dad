"""`POST /v1/changesets/{id}/push`: 202 with the push run for an editor, 403 for a viewer
(the database refuses), 409 when it is being pushed, 404 for a changeset of another tenant."""

from __future__ import annotations

import httpx

from smuves_sync.db import Database
from smuves_sync.db.changesets import NewChangeset, NewItem, changeset_create, changeset_items_add
from tests.integration.api.conftest import User, new_user
from tests.support.factories import Factory

PORTAL = 4200


async def _changeset(factory: Factory, owner: User) -> int:
    await factory.portal(owner.id, portal_id=PORTAL)
    db = Database(factory.pool)
    changeset = await changeset_create(db, NewChangeset(PORTAL, None, owner_id=owner.id))
    item = NewItem("site_page", "1", "pending", 1, "t0", {"htmlTitle": "b"}, {"htmlTitle": "a"})
    await changeset_items_add(db, changeset, [item])
    return changeset.id


async def test_an_editor_pushes_and_a_viewer_or_a_stranger_may_not(
    client: httpx.AsyncClient, factory: Factory, alice: User, bob: User
) -> None:
    changeset = await _changeset(factory, alice)
    viewer = await new_user(factory, "viewer")
    await factory.member(PORTAL, viewer.id, "viewer")

    refused = await client.post(f"/v1/changesets/{changeset}/push", headers=viewer.headers)
    assert refused.status_code == 403, refused.text
    stranger = await client.post(f"/v1/changesets/{changeset}/push", headers=bob.headers)
    assert stranger.status_code == 404, stranger.text

    accepted = await client.post(
        f"/v1/changesets/{changeset}/push", json={"publish": "draft"}, headers=alice.headers
    )
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert (body["changeset"], body["publish"]) == (changeset, "draft")
    assert [j["content_type"] for j in body["run"]["jobs"]] == ["site_page"]
    again = await client.post(f"/v1/changesets/{changeset}/push", headers=alice.headers)
    assert again.status_code == 409, again.text
