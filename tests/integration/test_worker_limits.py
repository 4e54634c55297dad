"""What a worker login (smuves_worker_login) may not choose: the time of the HubSpot request
counters, and runs of its own. Tried through the real SQL as that login, as a compromised
worker would; the worker's real work (recording its requests, firing a due schedule) still
goes through.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from smuves_sync.db import Database, Pool
from smuves_sync.models import ContentType, JobStatus
from smuves_sync.workers.scheduler import fire_due_schedules
from tests.factories import Factory
from tests.support import query
from tests.support.sql import statement

LONG_AGO = datetime(2001, 2, 3, 4, 5, tzinfo=UTC)


async def _as(
    pool: Pool, name: str, *, as_portal: int | None = None, **params: Any
) -> list[dict[str, Any]]:
    """Statement `name` in one transaction of `pool`, scoped to a portal."""
    async with pool.connection() as conn, conn.transaction():
        if as_portal is not None:
            await conn.execute(statement("trust_set_portal"), {"portal_id": as_portal})
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(statement(name), params)
            return await cur.fetchall() if cur.description else []


async def test_a_worker_counts_its_hubspot_requests_on_the_databases_clock(
    worker_login_pool: Pool, db: Database
) -> None:
    # Counters written for a time of the worker's choosing would forge the dashboard's history
    # (or, dated a week ahead, make the next write forget every real minute).
    for when in (LONG_AGO, datetime.now(UTC) + timedelta(days=8)):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="database's clock"):
            await _as(worker_login_pool, "trust_record_minute_at", requests=7, now=when)
    assert await query(db, "trust_minutes") == []

    await _as(worker_login_pool, "trust_record_minute_at", requests=7, now=None)
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
            await _as(worker_login_pool, name, as_portal=portal, portal_id=portal, **params)
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
        await _as(
            worker_login_pool, "trust_create_finished_run", as_portal=portal, portal_id=portal
        )
    # Nor may it ask for a full read: only `smuves sync --full` (the operator) does.
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        await _as(
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
        [row] = await _as(worker_login_pool, "trust_read_lease", as_portal=victim, job_id=held.id)
    except psycopg.errors.InsufficientPrivilege:
        return
    tokens = await _as(
        worker_login_pool, "trust_portal_token", job_id=held.id, lease_token=row["lease_token"]
    )
    assert tokens == []


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="known gap: the worker role's rows are those of the portal it names in "
    "app.portal_id, which it sets itself: it may write any portal's content and schedules",
)
async def test_a_worker_writes_no_portal_it_holds_no_lease_of(
    factory: Factory, worker_login_pool: Pool, db: Database
) -> None:
    victim = await factory.portal()
    run = await factory.run(victim)
    await factory.content_item(run, "1")
    await factory.schedule(victim, next_run_at=datetime.now(UTC) + timedelta(days=1))
    written = []
    for name in ("trust_deface_content", "trust_make_schedule_due"):
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            written += await _as(worker_login_pool, name, as_portal=victim, portal_id=victim)
    assert written == []
