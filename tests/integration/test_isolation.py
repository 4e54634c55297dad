"""Tenant isolation, derived from the catalog so that a new table or function cannot slip past.

Two users each own a portal with rows in every tenant table. As user A (smuves_app) or as a
worker scoped to A's portal (smuves_worker, under the lease of a job of A's), no visible row of
any table holds B's user id or B's portal id; with no user or portal named, nothing is visible
at all, and without a lease a worker sees no content.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from psycopg import AsyncConnection, sql
from psycopg.rows import TupleRow

from smuves_sync.db import Database, DbRole, Pool
from smuves_sync.db.queries import queries
from smuves_sync.db.runs import run_create
from smuves_sync.errors import DatabaseRefused
from smuves_sync.models import ContentType, Job, JobKind, JobStatus, RunStatus
from tests.support import query
from tests.support.factories import Factory

# Not tenant data: the migration ledger, the list of content types and the queue's leases.
# Everything else must be under row-level security.
SHARED_TABLES = {"schema_migrations", "schema_functions", "content_types", "job_leases"}
TENANT_COLUMNS = {"portal_id", "user_id", "owner_id"}


@dataclass(frozen=True)
class Tenant:
    user_id: uuid.UUID
    portal_id: int
    job: Job  # running: a worker of the portal works under its lease


async def _plant_tenant(factory: Factory, portal_id: int) -> Tenant:
    user = await factory.user()
    portal = await factory.portal(user, portal_id=portal_id, token_encrypted=b"secret")
    run = await factory.run(portal, owner=user, status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING)
    await factory.job(run, content_type=ContentType.BLOG_POST)
    await factory.content_item(run)
    # An object gone from HubSpot: its first version moves from its row into content_versions.
    gone = await factory.content_item(run)
    await query(
        factory.pool,
        "versions_mark_deleted",
        portal_id=portal,
        content_type=str(ContentType.SITE_PAGE),
        hubspot_ids=[gone],
    )
    await factory.content_sync(run, job_id=job.id)
    await factory.seen(job, "1")
    await factory.fetch_read(job)
    await factory.content_reject(run)
    export_run = await factory.run(portal, owner=user, kind=JobKind.EXPORT)
    await factory.export(export_run)
    await factory.notification(user, run)
    await factory.schedule(portal, owner=user)
    changeset = await factory.changeset(portal, {"hubspot_id": "1", "fields": {"name": "x"}})
    push_run = await factory.run(portal, owner=user, kind=JobKind.PUSH)
    push_job = await factory.job(push_run, status=JobStatus.COMPLETED)
    await query(
        factory.pool,
        "plant_push_intent",
        portal_id=portal,
        changeset_id=changeset,
        job_id=push_job.id,
    )
    return Tenant(user, portal, job)


# What a worker sees only while it holds the lease of a push job of the rows' changeset.
PUSH_JOB_ONLY = frozenset({"push_intents"})


@pytest.fixture
async def tenants(factory: Factory) -> tuple[Tenant, Tenant]:
    return await _plant_tenant(factory, 7_000_001), await _plant_tenant(factory, 7_000_002)


async def _tables(conn: AsyncConnection[TupleRow]) -> list[dict[str, Any]]:
    return await query(conn, "catalog_tables")


async def _visible(
    conn: AsyncConnection[TupleRow], role: DbRole, table: str
) -> list[dict[str, Any]] | None:
    """Every row of `table` the session can see (only the columns `role` may read);
    None when the role may read no column of it."""
    columns = [
        r["name"]
        for r in await query(conn, "catalog_readable_columns", table=table, role=role.value)
    ]
    if not columns:
        return None
    listed = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    return await query(conn, "isolation_select_columns", parts={"columns": listed, "table": table})


async def _tenant_tables(
    conn: AsyncConnection[TupleRow], role: DbRole
) -> AsyncIterator[tuple[str, list[dict[str, Any]] | None]]:
    """(name, what `_visible` gives) of every table but the shared ones."""
    for table in await _tables(conn):
        if table["name"] not in SHARED_TABLES:
            yield table["name"], await _visible(conn, role, table["name"])


@asynccontextmanager
async def _session(
    pool: Pool,
    *,
    user: uuid.UUID | None = None,
    portal: int | None = None,
    job: Job | None = None,
) -> AsyncIterator[AsyncConnection[TupleRow]]:
    async with pool.connection() as conn, conn.transaction():
        if user is not None:
            await conn.execute(queries()["session_set_user"], {"user_id": user})
        if portal is not None:
            await conn.execute(queries()["session_set_portal"], {"portal_id": portal})
        if job is not None:
            lease = {"portal_id": job.portal_id, "job_id": job.id, "lease_token": job.lease_token}
            await conn.execute(queries()["session_set_job"], lease)
        yield conn


def _mentions(row: dict[str, Any], tenant: Tenant) -> bool:
    return any(value in (tenant.user_id, tenant.portal_id) for value in row.values())


async def test_every_tenant_table_has_rls_enabled_and_forced(admin_pool: Pool) -> None:
    async with admin_pool.connection() as conn:
        tables = await _tables(conn)
    tenant = {t["name"] for t in tables if TENANT_COLUMNS & set(t["columns"])}
    assert {"portals", "app_users"} <= {t["name"] for t in tables}
    assert {"runs", "jobs", "content_items", "exports", "notifications", "schedules"} <= tenant
    unprotected = [
        t["name"]
        for t in tables
        if t["name"] not in SHARED_TABLES and not (t["rls"] and t["forced"])
    ]
    assert unprotected == []


async def test_every_security_definer_function_pins_search_path_and_is_not_public(
    admin_pool: Pool,
) -> None:
    async with admin_pool.connection() as conn:
        functions = await query(conn, "catalog_security_definer_functions")
    assert any(f["signature"].startswith("reconcile_stuck_runs(") for f in functions)
    for function in functions:
        paths = [c for c in function["config"] if c.startswith("search_path=")]
        assert paths, f"{function['signature']} does not pin search_path"
        assert "public" not in paths[0] and "$user" not in paths[0], function
        assert not function["public_can_execute"], f"PUBLIC may execute {function['signature']}"


async def test_no_function_is_executable_by_public(admin_pool: Pool) -> None:
    # 0001_roles revokes it once, by default privileges, for every function the owner creates.
    async with admin_pool.connection() as conn:
        assert await query(conn, "catalog_functions_public_may_execute") == []


async def test_every_object_belongs_to_the_owner_role(admin_pool: Pool) -> None:
    async with admin_pool.connection() as conn:
        assert await query(conn, "catalog_objects_not_owned_by_smuves_owner") == []


async def test_a_user_sees_none_of_another_users_rows(
    tenants: tuple[Tenant, Tenant], app_pool: Pool
) -> None:
    a, b = tenants
    async with _session(app_pool, user=a.user_id) as conn:
        async for name, rows in _tenant_tables(conn, DbRole.APP):
            if rows is None:
                continue
            assert rows, f"user A should see their own {name}"
            leaked = [row for row in rows if _mentions(row, b)]
            assert leaked == [], f"user A sees user B's {name}"


async def test_a_session_without_a_user_sees_nothing(
    tenants: tuple[Tenant, Tenant], app_pool: Pool, worker_pool: Pool
) -> None:
    for pool, role in ((app_pool, DbRole.APP), (worker_pool, DbRole.WORKER)):
        async with _session(pool) as conn:
            async for name, rows in _tenant_tables(conn, role):
                assert rows in ([], None), f"{role} with no user or portal sees {name}"


async def test_a_worker_scoped_to_one_portal_sees_none_of_another(
    tenants: tuple[Tenant, Tenant], worker_pool: Pool
) -> None:
    a, b = tenants
    async with _session(worker_pool, job=a.job) as conn:
        seen = []
        async for name, rows in _tenant_tables(conn, DbRole.WORKER):
            if rows is None:
                continue
            seen.append(name)
            if name in PUSH_JOB_ONLY:
                # Seen only under the lease of a push job of the changeset (this is a fetch's):
                # tests/integration/push/test_push_start.py.
                assert rows == [], name
                continue
            assert rows, f"the worker should see portal A's {name}"
            assert [row for row in rows if _mentions(row, b)] == []
    assert {"content_items", "exports", "jobs", "runs"} <= set(seen)


async def test_a_worker_without_a_lease_sees_no_content(
    tenants: tuple[Tenant, Tenant], worker_pool: Pool
) -> None:
    a, _ = tenants
    async with _session(worker_pool, portal=a.portal_id) as conn:
        visible = {name async for name, rows in _tenant_tables(conn, DbRole.WORKER) if rows}
    assert {"runs", "jobs", "schedules", "exports"} <= visible
    assert visible.isdisjoint(
        {"content_items", "content_versions", "content_rejects", "fetch_seen"}
    )


async def test_the_token_column_is_readable_by_neither_role(admin_pool: Pool) -> None:
    async with admin_pool.connection() as conn:
        for role in DbRole:
            columns = await query(
                conn, "catalog_readable_columns", table="portals", role=role.value
            )
            assert "token_encrypted" not in {c["name"] for c in columns}


async def test_writes_into_another_tenant_are_refused(
    tenants: tuple[Tenant, Tenant], app_db: Database, worker_db: Database
) -> None:
    a, b = tenants
    async with app_db.as_user(a.user_id) as scoped:
        with pytest.raises(DatabaseRefused, match="row-level security"):
            await run_create(scoped, b.portal_id, JobKind.FETCH, [ContentType.SITE_PAGE])
    async with worker_db.for_portal(a.portal_id) as scoped:
        with pytest.raises(DatabaseRefused, match="row-level security"):
            await run_create(scoped, b.portal_id, JobKind.FETCH, [ContentType.SITE_PAGE])
    async with app_db.as_user(a.user_id) as scoped:
        run = await run_create(scoped, a.portal_id, JobKind.FETCH, [ContentType.HUBDB_TABLE])
        assert run.owner_id is None and run.portal_id == a.portal_id
