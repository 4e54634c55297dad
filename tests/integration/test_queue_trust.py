"""The worker role gets a portal's token only with a lease the queue handed out.

Written as a compromised worker login (smuves_worker_login) would try it: plant a job that
runs under a lease token of its own, move a job to another portal, claim "in the future" to
expire every lease, add jobs to any portal. Each attempt is refused and changes nothing; the
same login still does its real work (claiming, firing due schedules). The API's login may
add jobs only to its user's portals.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.models import ContentType, JobPriority, JobStatus, RunStatus
from smuves_sync.workers.scheduler import fire_due_schedules
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import query_as

FUTURE = datetime.now(UTC) + timedelta(days=3650)


async def _due_blog_schedule(factory: Factory) -> tuple[uuid.UUID, int, int]:
    """A user's portal with a schedule of its blog posts due a minute ago."""
    owner = await factory.user()
    portal = await factory.portal(owner)
    due = await factory.schedule(
        portal,
        owner=owner,
        content_types=[ContentType.BLOG_POST],
        next_run_at=datetime.now(UTC) - timedelta(minutes=1),
    )
    return owner, portal, due


async def test_a_worker_cannot_plant_or_move_a_job_to_get_a_token(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    victim = await factory.portal(token_encrypted=b"the victim's token")
    run = await factory.run(victim)
    pending = await factory.job(run)
    mine = await factory.run()
    lease = uuid.uuid4()

    refused: list[tuple[str, dict[str, Any]]] = [
        ("trust_insert_leased_job", {"run_id": run.id, "portal_id": victim}),
        ("trust_lease_a_job", {"job_id": pending.id}),
        ("trust_move_job", {"job_id": pending.id, "portal_id": mine.portal_id, "run_id": mine.id}),
    ]
    for name, params in refused:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await query_as(worker_login_pool, name, as_portal=victim, lease_token=lease, **params)
    assert (
        await query_as(
            worker_login_pool, "trust_portal_token", job_id=pending.id, lease_token=lease
        )
        == []
    )
    [job] = await query(db, "trust_job_lease", job_id=pending.id)
    assert job == {"status": "pending", "lease_token": None, "locked_by": None}


async def test_a_worker_runs_on_the_databases_clock(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    held = await factory.job(run, status=JobStatus.RUNNING, locked_by="another worker")
    await factory.schedule(run.portal_id, next_run_at=FUTURE - timedelta(days=1))
    assert held.lease_token is not None
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("trust_claim_at", {}),
        ("trust_heartbeat_at", {"job_id": held.id, "lease_token": held.lease_token}),
        ("trust_reconcile_at", {}),
        ("trust_schedule_due_at", {}),
    ]
    for name, params in attempts:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="database's clock"):
            await query_as(worker_login_pool, name, now=FUTURE, **params)
    # The other worker keeps its lease; claiming on the server's clock takes nothing of it.
    assert await query_as(worker_login_pool, "trust_claim_at", now=None) == []
    [job] = await query(db, "trust_job_lease", job_id=held.id)
    assert (job["lease_token"], job["locked_by"]) == (held.lease_token, "another worker")
    # The operator's login (and so the tests) may still pass a time.
    assert [r["id"] for r in await query(db, "trust_claim_at", now=FUTURE)] == [held.id]


async def test_a_worker_adds_jobs_only_for_a_due_schedule(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    owner, portal, due = await _due_blog_schedule(factory)
    later = await factory.schedule(portal, owner=owner, next_run_at=FUTURE)
    run = await factory.run(portal, owner=owner)
    for schedule_id, content_type in (
        (None, ContentType.BLOG_POST),
        (later, ContentType.BLOG_POST),
        (due, ContentType.SITE_PAGE),  # a type the schedule does not ask for
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not add jobs"):
            await query_as(
                worker_login_pool,
                "trust_enqueue",
                as_portal=portal,
                run_id=run.id,
                content_type=str(content_type),
                schedule_id=schedule_id,
            )
    assert await query(db, "sync_jobs_of_portal", portal_id=portal) == []

    # The scheduler, logged in as the worker, fires the due schedule: its fetch starts.
    [started] = await fire_due_schedules(Database(worker_login_pool))
    assert [j.content_type for j in started.jobs] == [ContentType.BLOG_POST]
    assert started.run.portal_id == portal and started.run.owner_id == owner


async def test_the_api_adds_jobs_only_to_its_users_portals(
    factory: Factory, api_login_pool: Pool, db: Database
) -> None:
    alice, bob = await factory.user(), await factory.user()
    alices = await factory.run(await factory.portal(alice), owner=alice)
    bobs = await factory.run(await factory.portal(bob), owner=bob)

    def enqueue(run_id: int) -> Awaitable[list[dict[str, Any]]]:
        return query_as(
            api_login_pool,
            "trust_enqueue",
            as_user=alice,
            run_id=run_id,
            content_type="site_page",
            schedule_id=None,
        )

    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="may not add jobs"):
        await enqueue(bobs.id)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await query_as(
            api_login_pool,
            "trust_insert_leased_job",
            as_user=alice,
            run_id=alices.id,
            portal_id=alices.portal_id,
            lease_token=uuid.uuid4(),
        )
    [job] = await enqueue(alices.id)
    assert (job["portal_id"], job["status"]) == (alices.portal_id, "pending")
    assert await query(db, "sync_jobs_of_portal", portal_id=bobs.portal_id) == []


async def test_a_login_cannot_raise_its_jobs_above_its_kind_of_run(
    factory: Factory, worker_login_pool: Pool, api_login_pool: Pool
) -> None:
    owner, portal, due = await _due_blog_schedule(factory)
    # (login, its scope, type, schedule, priority asked, priority given)
    asks = (
        (
            worker_login_pool,
            portal,
            None,
            "blog_post",
            due,
            JobPriority.INTERACTIVE,
            JobPriority.SCHEDULED,
        ),
        (api_login_pool, None, owner, "site_page", None, 100, JobPriority.INTERACTIVE),
    )
    for pool, as_portal, as_user, content_type, schedule_id, asked, given in asks:
        run = await factory.run(portal, owner=owner)
        [job] = await query_as(
            pool,
            "trust_enqueue_priority",
            as_portal=as_portal,
            as_user=as_user,
            run_id=run.id,
            content_type=content_type,
            priority=asked,
            schedule_id=schedule_id,
        )
        assert job["priority"] == given


async def test_a_worker_cannot_choose_the_leases_of_a_claim(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    held = await factory.job(status=JobStatus.RUNNING, locked_by="another worker")
    with pytest.raises(psycopg.errors.UndefinedFunction):
        await query_as(worker_login_pool, "trust_claim_with_short_leases")
    [job] = await query(db, "trust_job_lease", job_id=held.id)
    assert job["locked_by"] == "another worker"
