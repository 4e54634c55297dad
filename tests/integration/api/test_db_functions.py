"""The SECURITY DEFINER functions the API calls hold on their own, without the API's
checks in front of them: they act for the user in app.user_id and for nobody else."""

from __future__ import annotations

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.portals import user_sign_in
from smuves_sync.db.runs import run_stop
from smuves_sync.errors import DatabaseRefused
from smuves_sync.models import JobStatus, RunStatus
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory


async def test_stop_run_does_nothing_to_another_users_run(
    app_db: Database, factory: Factory, admin_pool: Pool, alice: User, bob: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING)
    async with app_db.as_user(bob.id) as scoped:
        assert await run_stop(scoped, run.id) is None
    jobs = await query(admin_pool, "check_jobs_of_run", run_id=run.id)
    assert [j["status"] for j in jobs] == ["running"]
    async with app_db.as_user(alice.id) as scoped:
        stopped = await run_stop(scoped, run.id)
    assert stopped is not None and stopped.status is RunStatus.STOPPED


async def test_stop_run_with_no_user_does_nothing(
    app_db: Database, factory: Factory, admin_pool: Pool, alice: User
) -> None:
    run = await factory.run(await factory.portal(alice.id), status=RunStatus.RUNNING)
    await factory.job(run)
    assert await run_stop(app_db, run.id) is None
    assert [j["status"] for j in await query(admin_pool, "check_jobs_of_run", run_id=run.id)] == [
        "pending"
    ]


async def test_sign_in_needs_a_user_and_makes_only_that_one(
    app_db: Database, admin_pool: Pool, bob: User
) -> None:
    with pytest.raises(DatabaseRefused, match=r"app\.user_id is not set"):
        await user_sign_in(app_db, "someone@example.com")
    # Signing in as bob with bob's email changes nothing; it cannot create anyone else.
    async with app_db.as_user(bob.id) as scoped:
        assert await user_sign_in(scoped, bob.email) == bob.id
    assert await query(admin_pool, "check_app_user", user_id=bob.id) == [
        {"id": bob.id, "email": bob.email}
    ]
