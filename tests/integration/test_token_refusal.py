"""Marking a portal whose token HubSpot refused, in the database: a worker only under the live
lease of one of its jobs (and then the job's whole run fails at once), the orchestrator only
for the operator or a member of the portal."""

from __future__ import annotations

import uuid

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.portals import portal_mark_token_refused, portal_token_refused
from smuves_sync.errors import DatabaseRefused
from smuves_sync.models import ContentType, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import T0, query
from tests.support.factories import Factory

TYPES = (ContentType.SITE_PAGE, ContentType.BLOG_POST, ContentType.HUBDB_TABLE)


async def _marked(db: Database, portal: int) -> bool:
    [row] = await query(db, "token_rejected_at", portal_id=portal)
    return row["token_rejected_at"] is not None


async def test_only_the_lease_holder_fails_its_run_and_marks_the_portal(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    portal = await factory.portal()
    run = await factory.run(portal, content_types=TYPES)
    for content_type in TYPES:
        await factory.job(run, content_type=content_type)
    other_run = await factory.run(portal, content_types=[ContentType.LANDING_PAGE])
    await factory.job(other_run, content_type=ContentType.LANDING_PAGE)
    [claimed] = await Queue(worker_db, settings).claim(None, now=T0)
    assert claimed.run_id == run.id

    # Without the job's lease: nothing happens.
    assert await portal_token_refused(worker_db, claimed.id, uuid.uuid4(), "e", "p") == []
    assert not await _marked(db, portal)

    assert claimed.lease_token is not None
    failed = await portal_token_refused(worker_db, claimed.id, claimed.lease_token, "e", "p")

    assert sorted(j.content_type for j in failed) == sorted(TYPES)
    assert {(j.status, j.last_error, j.last_error_public) for j in failed} == {("failed", "e", "p")}
    assert await _marked(db, portal)
    runs = {r["id"]: r["status"] for r in await query(db, "token_runs_of_portal", portal_id=portal)}
    assert runs == {run.id: RunStatus.FAILED, other_run.id: RunStatus.PENDING}
    # Done once: the lease is gone with the job.
    assert await portal_token_refused(worker_db, claimed.id, claimed.lease_token, "e", "p") == []


async def test_only_a_member_or_the_operator_marks_a_portal(
    factory: Factory, api_login_pool: Pool, worker_login_pool: Pool, db: Database
) -> None:
    owner, member, stranger = await factory.user(), await factory.user(), await factory.user()
    portal = await factory.portal(owner, members=[member])
    app_db = Database(api_login_pool)  # the API's own login, not the operator's

    async with app_db.as_user(stranger) as scoped:
        assert not await portal_mark_token_refused(scoped, portal)
    assert not await _marked(db, portal)
    async with app_db.as_user(member) as scoped:
        assert await portal_mark_token_refused(scoped, portal)
    assert await _marked(db, portal)
    with pytest.raises(DatabaseRefused):  # a worker: only under a lease
        await portal_mark_token_refused(Database(worker_login_pool), portal)
    assert await portal_mark_token_refused(db, portal)  # the operator's login
    assert not await portal_mark_token_refused(db, 987654)  # no such portal
