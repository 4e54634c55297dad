"""The database's errors come out of `Database` (and the LISTEN connection) as the package's:
a lost connection is `DatabaseUnavailable`, a refusal `DatabaseRefused`, a lease refused
`LeaseLost`, anything else a `DatabaseError`, each with the driver's error as its cause."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import psycopg
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.fetch_seen import fetch_seen_start
from smuves_sync.db.listen import job_notifications
from smuves_sync.db.workers import WorkerSeat, worker_list, worker_register
from smuves_sync.errors import (
    DatabaseError,
    DatabaseRefused,
    DatabaseUnavailable,
    LeaseLost,
    NotPermitted,
    SchemaMismatch,
)
from smuves_sync.models import JobKind
from tests.support import query
from tests.support.factories import Factory


async def test_a_connection_killed_mid_transaction_is_database_unavailable(
    db: Database, worker_db: Database
) -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        async with worker_db.transaction() as scoped:
            [me] = await query(scoped, "errors_backend_pid")
            await query(db, "errors_terminate_backend", pid=me["pid"])
            await scoped.execute("session_ping")

    assert raised.value.retryable
    assert isinstance(raised.value.__cause__, psycopg.OperationalError)
    await worker_db.check()  # the dead connection is dropped; the pool serves on
    assert await worker_db.execute("session_ping") == 1


async def test_a_refused_connection_is_database_unavailable_and_names_no_password() -> None:
    url = "postgresql://smuves:hunter2@127.0.0.1:1/nowhere?connect_timeout=5"
    with pytest.raises(DatabaseUnavailable) as raised:
        async for _ in job_notifications(url):
            pass

    assert isinstance(raised.value.__cause__, psycopg.OperationalError)
    assert "hunter2" not in str(raised.value)


async def test_a_grant_refused_to_the_worker_login_is_database_refused(
    worker_login_pool: Pool,
) -> None:
    with pytest.raises(DatabaseRefused, match="permission denied") as raised:
        await worker_list(Database(worker_login_pool))

    assert isinstance(raised.value, NotPermitted) and isinstance(raised.value, DatabaseError)
    assert raised.value.sqlstate == "42501"
    assert isinstance(raised.value.__cause__, psycopg.errors.InsufficientPrivilege)


async def test_a_write_under_a_lease_taken_over_is_lease_lost(
    factory: Factory, db: Database, worker_db: Database
) -> None:
    lease = await factory.lease(await factory.portal())
    await query(db, "sync_steal_lease", job_id=lease.id)

    with pytest.raises(LeaseLost) as raised:
        async with worker_db.for_job(lease) as scoped:
            await fetch_seen_start(scoped, lease.id, lease.portal_id)

    assert raised.value.job_id == lease.id
    assert isinstance(raised.value.__cause__, psycopg.errors.InsufficientPrivilege)


async def test_other_failures_are_database_errors_and_roll_their_transaction_back(
    factory: Factory, db: Database, worker_login_pool: Pool
) -> None:
    job = await factory.job()
    [before] = await query(db, "errors_lease_of_job", job_id=job.id)
    with pytest.raises(DatabaseError, match="division by zero") as raised:
        async with db.transaction() as scoped:
            await query(scoped, "sync_steal_lease", job_id=job.id)
            await query(scoped, "errors_divide_by_zero")

    assert not isinstance(raised.value, DatabaseUnavailable | NotPermitted)
    assert raised.value.sqlstate == "22012"
    assert await query(db, "errors_lease_of_job", job_id=job.id) == [before]
    seat = WorkerSeat(
        name="host:1",
        host="host",
        pid=1,
        kinds=(JobKind.FETCH,),
        concurrency=0,
        heartbeat_every=timedelta(seconds=10),
    )
    with pytest.raises(DatabaseError, match="workers_concurrency_sensible"):
        await worker_register(Database(worker_login_pool), seat)


async def test_a_missing_function_is_a_schema_mismatch(worker_db: Database) -> None:
    with pytest.raises(SchemaMismatch) as raised:
        await query(worker_db, "errors_missing_function")

    assert isinstance(raised.value.__cause__, psycopg.errors.UndefinedFunction)


async def test_a_cancelled_statement_is_cancelled_not_translated(worker_db: Database) -> None:
    async def sleep_in_a_transaction() -> None:
        async with worker_db.transaction() as scoped:
            await query(scoped, "errors_sleep", seconds=60)

    sleeping = asyncio.create_task(sleep_in_a_transaction())
    await asyncio.sleep(0.3)  # under way (a cancel before it started proves the same)
    sleeping.cancel()

    with pytest.raises(asyncio.CancelledError):
        await sleeping
    assert await worker_db.execute("session_ping") == 1
