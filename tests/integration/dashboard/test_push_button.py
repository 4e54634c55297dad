"""The changeset page's Push button: it asks first, then starts the push run, audited; a
second push of the changeset is refused, and audited too."""

from __future__ import annotations

import httpx

from smuves_sync.db import Database
from smuves_sync.db.changesets import (
    NewChangeset,
    NewItem,
    changeset_create,
    changeset_get,
    changeset_items_add,
)
from smuves_sync.db.operator_actions import operator_action_recent
from smuves_sync.db.runs import run_get
from smuves_sync.models import JobKind
from tests.integration.dashboard.conftest import confirm, post_form, press_confirm
from tests.support.factories import Factory


async def test_push_asks_then_starts_a_push_run_and_refuses_a_second(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    portal = await factory.portal()
    changeset = await changeset_create(db, NewChangeset(portal, None))
    item = NewItem("site_page", "1", "pending", 1, "t0", {"htmlTitle": "b"}, {"htmlTitle": "a"})
    await changeset_items_add(db, changeset, [item])
    page = await dashboard.get(f"/changesets/{changeset.id}")
    assert f'action="/changesets/{changeset.id}/push"' in page.text

    asked = await post_form(dashboard, f"/changesets/{changeset.id}/push", signed_in)
    assert "Confirm: Push changeset" in asked.text
    still = await changeset_get(db, changeset.id)
    assert still is not None and still.status == "draft"
    done = await press_confirm(dashboard, asked.text, f"/changesets/{changeset.id}/push")

    run = await run_get(db, int(done.headers["location"].rsplit("/", 1)[1]))
    assert run is not None and run.kind is JobKind.PUSH and run.portal_id == portal
    twice = await confirm(dashboard, f"/changesets/{changeset.id}/push", signed_in)
    assert twice.headers["location"] == f"/changesets/{changeset.id}"
    actions = [a for a in (await operator_action_recent(db))[::-1] if a.action != "sign_in"]
    assert [a.action for a in actions] == ["changeset_push", "changeset_push"]
    assert actions[0].outcome["run_id"] == run.id
    assert "already being pushed" in actions[1].outcome["refused"]
