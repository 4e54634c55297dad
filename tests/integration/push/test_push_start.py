"""Starting a push, and what the database refuses whoever asks: a viewer's push, a second push
of a changeset in flight, a worker settling or recording intents of another portal's changeset."""

from __future__ import annotations

import uuid

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.changesets import (
    Changeset,
    NewChangeset,
    NewItem,
    changeset_create,
    changeset_get,
    changeset_items_add,
)
from smuves_sync.db.push import Outcome, push_intent_add, push_items_settle
from smuves_sync.errors import ChangesetBeingPushed, DatabaseError, NotPermitted
from smuves_sync.models import ContentType, JobKind
from smuves_sync.push_start import start_push
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.workers.runner import Runner
from tests.support.factories import Factory

PAGE = ContentType.SITE_PAGE


async def _changeset(db: Database, portal: int, owner: uuid.UUID | None = None) -> Changeset:
    changeset = await changeset_create(db, NewChangeset(portal, PAGE, owner_id=owner))
    item = NewItem("site_page", "1", "pending", 1, "t0", {"htmlTitle": "b"}, {"htmlTitle": "a"})
    await changeset_items_add(db, changeset, [item])
    return changeset


async def test_a_push_gets_a_job_per_pending_type_and_sets_the_changeset_pushing(
    db: Database, factory: Factory
) -> None:
    portal = await factory.portal()
    changeset = await _changeset(db, portal)
    started = await start_push(db, changeset.id, publish="draft")
    assert started.run.kind is JobKind.PUSH
    assert [(j.kind, j.content_type) for j in started.jobs] == [(JobKind.PUSH, PAGE)]
    now = await changeset_get(db, changeset.id)
    assert now is not None
    assert (now.status, now.publish, now.run_id) == ("pushing", "draft", started.run.id)
    with pytest.raises(ChangesetBeingPushed):
        await start_push(db, changeset.id)


async def test_a_viewer_may_not_push(factory: Factory, db: Database, api_login_pool: Pool) -> None:
    portal = await factory.portal()
    viewer, editor = await factory.user(), await factory.user()
    await factory.member(portal, viewer, "viewer")
    await factory.member(portal, editor, "editor")
    changeset = await _changeset(db, portal)
    api = Database(api_login_pool)
    with pytest.raises(NotPermitted):
        async with api.as_user(viewer) as scoped:
            await start_push(scoped, changeset.id)
    unchanged = await changeset_get(db, changeset.id)
    assert unchanged is not None and unchanged.status == "draft"
    async with api.as_user(editor) as scoped:
        started = await start_push(scoped, changeset.id)
    assert len(started.jobs) == 1


async def test_a_worker_settles_only_its_push_jobs_changeset(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    """A worker holding the lease of portal A's push job can neither settle an item of portal
    B's changeset nor record an intent under it: row-level security hides B's rows and
    refuses the insert, whatever ids the worker forges."""
    portal_a, portal_b = await factory.portal(), await factory.portal()
    mine, theirs = await _changeset(db, portal_a), await _changeset(db, portal_b)
    started = await start_push(db, mine.id)
    await start_push(db, theirs.id)
    [job] = await Queue(worker_db, settings, worker_id="w").claim(
        [JobKind.PUSH], limit=1, run_id=started.run.id
    )
    async with worker_db.for_job(job) as scoped:
        settled = await push_items_settle(scoped, theirs.id, PAGE, [Outcome("1", "applied")])
        assert settled == 0
    with pytest.raises(DatabaseError):
        async with worker_db.for_job(job) as scoped:
            await push_intent_add(scoped, job, theirs.id, {"1": "t0"})
    async with worker_db.for_job(job) as scoped:
        assert await push_items_settle(scoped, mine.id, PAGE, [Outcome("1", "conflict")]) == 1


async def test_a_push_that_fails_leaves_its_changeset_to_be_pushed_again(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    """The changeset follows its push jobs: a job failed for good (here: the portal has no
    token) sets it back to draft, its items still pending, and a new push may start."""
    portal = await factory.portal(token_encrypted=None)
    changeset = await _changeset(db, portal)
    await start_push(db, changeset.id)
    await Runner(worker_db, settings, kinds=[JobKind.PUSH], concurrency=1, burst=True).run()
    after = await changeset_get(db, changeset.id)
    assert after is not None and after.status == "draft"
    assert (await start_push(db, changeset.id)).jobs
