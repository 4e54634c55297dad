"""What a worker login (smuves_worker_login) may not choose: the time of the HubSpot request
counters, runs of its own, and which portal it writes (only one it holds a live lease of a
job of). Tried through the real SQL as that login, as a compromised worker would; the
worker's real work (recording its requests, firing a due schedule, writing under its lease)
still goes through.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.errors import LeaseLost
from smuves_sync.models import ContentType, JobStatus
from smuves_sync.workers.scheduler import fire_due_schedules
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import query_as

LONG_AGO = datetime(2001, 2, 3, 4, 5, tzinfo=UTC)


async def test_a_worker_counts_its_hubspot_requests_on_the_databases_clock(
    worker_login_pool: Pool, db: Database
) -> None:
    # Counters written for a time of the worker's choosing would forge the dashboard's history
    # (or, dated a week ahead, make the next write forget every real minute).
    for when in (LONG_AGO, datetime.now(UTC) + timedelta(days=8)):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="database's clock"):
            await query_as(worker_login_pool, "trust_record_minute_at", requests=7, now=when)
    assert await query(db, "trust_minutes") == []

    await query_as(worker_login_pool, "trust_record_minute_at", requests=7, now=None)
    [minute] = await query(db, "trust_minutes")
    assert minute["requests"] == 7
    assert abs(minute["minute"] - datetime.now(UTC)) < timedelta(minutes=2)
    # The operator's login (and so the tests) may still pass a time.
    await query(db, "trust_record_minute_at", requests=1, now=LONG_AGO)
    assert len(await query(db, "trust_minutes")) == 2


async def test_a_worker_creates_a_run_only_for_a_due_schedule(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    owner = await factory.user()
    portal = await factory.portal(owner)
    later = datetime.now(UTC) + timedelta(days=1)
    await factory.schedule(
        portal, owner=owner, content_types=[ContentType.BLOG_POST], next_run_at=later
    )

    # No schedule is due: no run, empty or not, finished or not, whoever it names as owner.
    for name, params in (
        ("trust_create_run", {"owner_id": owner}),
        ("trust_create_run", {"owner_id": None}),
        ("trust_create_finished_run", {}),
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await query_as(worker_login_pool, name, as_portal=portal, portal_id=portal, **params)
    assert await query(db, "trust_runs_of_portal", portal_id=portal) == []

    # Due now: the scheduler, logged in as the worker, starts its fetch, run and all; a run
    # that claims to be finished is still refused.
    await factory.schedule(
        portal,
        owner=owner,
        content_types=[ContentType.BLOG_POST],
        next_run_at=datetime.now(UTC) - timedelta(minutes=1),
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await query_as(
            worker_login_pool, "trust_create_finished_run", as_portal=portal, portal_id=portal
        )
    # Nor may it ask for a full read: only `smuves sync --full` (the operator) does.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await query_as(
            worker_login_pool,
            "trust_create_full_run",
            as_portal=portal,
            portal_id=portal,
            owner_id=owner,
        )
    [started] = await fire_due_schedules(Database(worker_login_pool))
    assert (started.run.portal_id, started.run.owner_id) == (portal, owner)
    assert [r["id"] for r in await query(db, "trust_runs_of_portal", portal_id=portal)] == [
        started.run.id
    ]


async def test_a_worker_cannot_read_another_workers_lease_to_get_a_token(
    factory: Factory, worker_login_pool: Pool
) -> None:
    victim = await factory.portal(token_encrypted=b"the victim's token")
    run = await factory.run(victim)
    held = await factory.job(run, status=JobStatus.RUNNING, locked_by="another worker")
    try:
        [row] = await query_as(
            worker_login_pool, "trust_read_lease", as_portal=victim, job_id=held.id
        )
    except psycopg.errors.InsufficientPrivilege:
        return
    tokens = await query_as(
        worker_login_pool, "trust_portal_token", job_id=held.id, lease_token=row["lease_token"]
    )
    assert tokens == []


async def test_a_worker_writes_no_portal_it_holds_no_lease_of(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    victim = await factory.portal()
    run = await factory.run(victim)
    await factory.content_item(run, "1")
    await factory.schedule(victim, next_run_at=datetime.now(UTC) + timedelta(days=1))
    written = []
    for name in ("trust_deface_content", "trust_make_schedule_due", "trust_plant_content"):
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            written += await query_as(worker_login_pool, name, as_portal=victim, portal_id=victim)
    assert written == []
    # Nor does it read the portal's content.
    read = await query_as(
        worker_login_pool, "trust_content_names", as_portal=victim, portal_id=victim
    )
    assert read == []
    assert await query(db, "trust_content_names", portal_id=victim) == [
        {"hubspot_id": "1", "name": "A page"}
    ]


Lease = tuple[int, uuid.UUID | None]  # a job's id and a lease token, as `query_as` takes them


async def as_worker(
    pool: Pool, name: str, portal: int, lease: Lease, *, rows_of: int | None = None
) -> list[dict[str, Any]]:
    """The named statement as the worker login, scoped to `portal` under `lease`, on the rows
    of portal `rows_of` (default: `portal`)."""
    return await query_as(pool, name, as_portal=portal, lease=lease, portal_id=rows_of or portal)


async def test_a_worker_writes_its_portal_only_while_its_lease_is_live(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    pool = worker_login_pool
    run = await factory.run(portal := await factory.portal())
    held = await factory.job(run, status=JobStatus.RUNNING)
    lease: Lease = (held.id, held.lease_token)
    await factory.content_item(run, "1")

    assert await as_worker(pool, "trust_deface_content", portal, lease) == [{"hubspot_id": "1"}]
    planted = await as_worker(pool, "trust_plant_content", portal, lease)
    assert planted == [{"hubspot_id": "planted"}]

    # Taken over by another worker's claim: the old lease writes nothing, reads nothing.
    await query(db, "trust_take_over_lease", job_id=held.id)
    assert await as_worker(pool, "trust_deface_content", portal, lease) == []
    assert await as_worker(pool, "trust_content_names", portal, lease) == []
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await as_worker(pool, "trust_plant_content", portal, lease)
    with pytest.raises(LeaseLost):  # a page stored under it: the worker stops
        async with Database(pool).for_job(held) as scoped:
            await query(scoped, "trust_plant_content", portal_id=portal)

    # Expired (its last heartbeat is older than the fetch lease), though nobody took it over;
    # and a made-up token.
    expired = await factory.job(
        run,
        status=JobStatus.RUNNING,
        content_type=ContentType.BLOG_POST,
        heartbeat_at=datetime.now(UTC) - timedelta(hours=1),
    )
    for lease in ((expired.id, expired.lease_token), (expired.id, uuid.uuid4())):
        assert await as_worker(pool, "trust_deface_content", portal, lease) == []


async def test_a_lease_of_one_portal_writes_no_other(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    mine, victim = await factory.portal(), await factory.portal()
    my_run, their_run = await factory.run(mine), await factory.run(victim)
    await factory.content_item(their_run, "1")
    held = await factory.job(my_run, status=JobStatus.RUNNING)
    lease: Lease = (held.id, held.lease_token)
    pool = worker_login_pool

    # Naming the victim's portal with my job's lease, or my portal and the victim's rows.
    for portal in (victim, mine):
        defaced = await as_worker(pool, "trust_deface_content", portal, lease, rows_of=victim)
        assert defaced == []
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await as_worker(pool, "trust_plant_content", portal, lease, rows_of=victim)
    assert await query(db, "trust_content_names", portal_id=victim) == [
        {"hubspot_id": "1", "name": "A page"}
    ]


async def test_the_schedulers_functions_change_only_a_due_schedule(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    portal = await factory.portal(owner := await factory.user())
    later = datetime.now(UTC) + timedelta(days=1)
    waiting = await factory.schedule(portal, owner=owner, next_run_at=later)

    # Not due: neither moved (made due, or pushed off) nor disabled, nobody told anything.
    [advanced] = await query_as(worker_login_pool, "trust_advance_schedule", schedule_id=waiting)
    [told] = await query_as(worker_login_pool, "trust_disable_schedule", schedule_id=waiting)
    assert (advanced["advanced"], told["told"]) == (False, None)
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await query_as(worker_login_pool, "trust_notify", as_portal=portal, schedule_id=waiting)
    assert await query(db, "trust_schedule", schedule_id=waiting) == [
        {"enabled": True, "next_run_at": later}
    ]
    assert await query(db, "trust_notifications_of_schedule", schedule_id=waiting) == []

    # Due: the scheduler advances it, or disables it and tells its owner.
    due = await factory.schedule(
        portal, owner=owner, next_run_at=datetime.now(UTC) - timedelta(minutes=1)
    )
    [advanced] = await query_as(worker_login_pool, "trust_advance_schedule", schedule_id=due)
    assert advanced["advanced"] is True
    [again] = await query_as(worker_login_pool, "trust_advance_schedule", schedule_id=due)
    assert again["advanced"] is False  # no longer due
    bad = await factory.schedule(
        portal, owner=owner, next_run_at=datetime.now(UTC) - timedelta(minutes=1)
    )
    [told] = await query_as(worker_login_pool, "trust_disable_schedule", schedule_id=bad)
    assert told["told"] is True
    assert [r["enabled"] for r in await query(db, "trust_schedule", schedule_id=bad)] == [False]
    assert len(await query(db, "trust_notifications_of_schedule", schedule_id=bad)) == 1
