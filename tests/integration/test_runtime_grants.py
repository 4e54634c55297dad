"""The runtime roles hold exactly the privileges their code uses, no more.

The lists below are every table, column, sequence and function privilege smuves_app (the
HTTP API) and smuves_worker (the workers) have in a freshly migrated database, read from the
catalog: a new grant fails this test until it is added here, on purpose. Then a few of the
privileges they lost, tried through their own logins.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from smuves_sync.db import DbRole, Pool
from smuves_sync.models import JobStatus
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import query_as

APP = [
    "DELETE ON portals",
    "EXECUTE ON FUNCTION app_user_sign_in(text,boolean)",
    "EXECUTE ON FUNCTION changeset_push_begin(bigint,bigint,text)",
    "EXECUTE ON FUNCTION current_app_user()",
    "EXECUTE ON FUNCTION editor_portal_ids()",
    "EXECUTE ON FUNCTION enqueue_job(bigint,text,smallint,integer,timestamp with time zone,"
    "bigint,text,bigint)",
    "EXECUTE ON FUNCTION mark_portal_token_refused(bigint)",
    "EXECUTE ON FUNCTION member_portal_ids()",
    "EXECUTE ON FUNCTION metrics_job_durations(double precision[])",
    "EXECUTE ON FUNCTION metrics_jobs(timestamp with time zone)",
    "EXECUTE ON FUNCTION metrics_workers_live(timestamp with time zone)",
    "EXECUTE ON FUNCTION portal_token_for_member(bigint)",
    "EXECUTE ON FUNCTION run_rejects_note(bigint)",
    "EXECUTE ON FUNCTION stop_run(bigint,timestamp with time zone)",
    "INSERT (changeset_id, portal_id, content_type, hubspot_id, base_version, base_updated, "
    "fields, before, state, reason, warnings) ON changeset_items",
    "INSERT (id, name, owner_id, token_encrypted, time_zone) ON portals",
    "INSERT (portal_id, owner_id, content_type, source, rolls_back, filename) ON changesets",
    "INSERT (portal_id, owner_id, kind, content_types, full_read) ON runs",
    "INSERT (run_id, portal_id, content_type, format, include_deleted, edit, fields) ON exports",
    "SELECT (id, name, owner_id, created_at, token_rejected_at) ON portals",
    "SELECT (id, portal_id, owner_id, kind, status, content_types, created_at, started_at, "
    "finished_at) ON runs",
    "SELECT (id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, "
    "run_after, total, processed, last_error_public, created_at, finished_at, priority, "
    "fair_at) ON jobs",
    "SELECT (portal_id, content_type, confirmed_at, listing_started_at, last_full_listing_at) "
    "ON content_syncs",
    "SELECT (portal_id, content_type, hubspot_id, name, slug, url, state, language, "
    "hubspot_updated_at, archived, deleted_at, data, content_hash, changed_at, "
    "translated_from_id, version, first_version_id, first_version_run, first_version_at) "
    "ON content_items",
    "SELECT (portal_id, user_id, role) ON portal_members",
    "SELECT (run_id, content_type, reason) ON content_rejects",
    "SELECT (version) ON schema_migrations",
    "SELECT ON changeset_items",
    "SELECT ON changesets",
    "SELECT ON content_history",
    "SELECT ON content_versions",
    "SELECT ON exports",
    "SELECT ON fetch_reads",
    "SELECT ON notifications",
    "UPDATE (name, token_encrypted, time_zone, token_rejected_at) ON portals",
    "UPDATE (read_at) ON notifications",
]

WORKER = [
    "DELETE ON fetch_seen",
    "EXECUTE ON FUNCTION advance_due_schedule(bigint,timestamp with time zone,timestamp with "
    "time zone,timestamp with time zone)",
    "EXECUTE ON FUNCTION checkpoint_job(bigint,uuid,text,bigint,bigint,timestamp with time zone)",
    "EXECUTE ON FUNCTION claim_due_schedule(bigint[],timestamp with time zone)",
    "EXECUTE ON FUNCTION claim_jobs(text,text[],integer,timestamp with time zone,bigint,"
    "integer,bigint[])",
    "EXECUTE ON FUNCTION complete_jobs(bigint[],uuid[],bigint[],timestamp with time zone,boolean)",
    "EXECUTE ON FUNCTION content_history_run(bigint,text)",
    "EXECUTE ON FUNCTION content_insert_new_page(bigint,text,bigint,text,json,text[])",
    "EXECUTE ON FUNCTION current_app_portal()",
    "EXECUTE ON FUNCTION disable_due_schedule(bigint,text,timestamp with time zone)",
    "EXECUTE ON FUNCTION enqueue_job(bigint,text,smallint,integer,timestamp with time zone,"
    "bigint,text,bigint)",
    "EXECUTE ON FUNCTION fail_job(bigint,uuid,text,boolean,interval,interval,double precision,"
    "timestamp with time zone,text)",
    "EXECUTE ON FUNCTION fail_run_token_refused(bigint,uuid,text,text,timestamp with time zone)",
    "EXECUTE ON FUNCTION heartbeat_job(bigint,uuid,timestamp with time zone)",
    "EXECUTE ON FUNCTION operator_session()",
    "EXECUTE ON FUNCTION park_job(bigint,uuid,timestamp with time zone,text,timestamp with "
    "time zone)",
    "EXECUTE ON FUNCTION portal_token(bigint,uuid)",
    "EXECUTE ON FUNCTION push_job_changeset()",
    "EXECUTE ON FUNCTION push_versions_attribute(text,text[])",
    "EXECUTE ON FUNCTION reconcile_stuck_runs(timestamp with time zone)",
    "EXECUTE ON FUNCTION record_hubspot_minute(bigint,bigint,timestamp with time zone)",
    "EXECUTE ON FUNCTION release_job(bigint,uuid,timestamp with time zone)",
    "EXECUTE ON FUNCTION worker_heartbeat(bigint,uuid,bigint[],timestamp with time zone)",
    "EXECUTE ON FUNCTION worker_holds_lease()",
    "EXECUTE ON FUNCTION worker_may_create_run(bigint,uuid,job_kind,text[])",
    "EXECUTE ON FUNCTION worker_register(text,text,integer,text[],integer,bigint,interval,"
    "timestamp with time zone)",
    "EXECUTE ON FUNCTION worker_unregister(bigint,uuid)",
    "INSERT (portal_id, content_type, hubspot_id, name, slug, url, state, language, "
    "hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run, changed_run, "
    "changed_at, translated_from_id, version, first_version_run) ON content_items",
    "INSERT (portal_id, owner_id, kind, content_types, full_read) ON runs",
    "INSERT ON content_rejects",
    "INSERT ON content_syncs",
    "INSERT ON fetch_reads",
    "INSERT ON fetch_seen",
    "INSERT ON push_intents",
    "SELECT (id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, "
    "run_after, locked_at, locked_by, heartbeat_at, total, processed, cursor, last_error, "
    "last_error_public, idempotency_key, created_at, finished_at, priority, fair_at) ON jobs",
    "SELECT (id, token_rejected_at) ON portals",
    "SELECT (portal_id, content_type, hubspot_id, version) ON content_versions",
    "SELECT (portal_id, owner_id, content_types, enabled, next_run_at) ON schedules",
    "SELECT ON changeset_items",
    "SELECT ON changesets",
    "SELECT ON content_items",
    "SELECT ON content_syncs",
    "SELECT ON exports",
    "SELECT ON fetch_reads",
    "SELECT ON fetch_seen",
    "SELECT ON job_leases",
    "SELECT ON push_intents",
    "SELECT ON runs",
    "UPDATE (portal_id, content_type, hubspot_id, name, slug, url, state, language, "
    "hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run, changed_run, "
    "changed_at, translated_from_id) ON content_items",
    "UPDATE (row_count, bytes, deleted_count) ON exports",
    "UPDATE (state, decided_at) ON push_intents",
    "UPDATE (state, reason, applied_version, applied_at) ON changeset_items",
    "UPDATE ON content_syncs",
    "UPDATE ON fetch_reads",
    "USAGE ON SEQUENCE content_versions_id_seq",
]


@pytest.mark.parametrize(("role", "expected"), [(DbRole.APP, APP), (DbRole.WORKER, WORKER)])
async def test_a_runtime_role_holds_exactly_the_listed_privileges(
    admin_pool: Pool, role: DbRole, expected: list[str]
) -> None:
    granted = [r["line"] for r in await query(admin_pool, "grants_of_role", role=role.value)]
    assert granted == expected


async def _refused(pool: Pool, name: str, **scope: Any) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
        await query_as(pool, name, **scope)


async def test_the_worker_cannot_ask_whose_portals_are_whose(
    factory: Factory, worker_login_pool: Pool
) -> None:
    user = await factory.user()
    portal = await factory.portal(user)
    await _refused(worker_login_pool, "grants_member_portals", as_portal=portal)
    await _refused(worker_login_pool, "grants_portal_owners", as_portal=portal)
    # What it does need: whether its portal exists (a scheduled fetch's start).
    rows = await query_as(worker_login_pool, "grants_portal_ids", as_portal=portal)
    assert rows == [{"id": portal}]


async def test_the_api_cannot_read_the_operators_error_nor_the_workers_lock(
    factory: Factory, api_login_pool: Pool
) -> None:
    user = await factory.user()
    portal = await factory.portal(user)
    run = await factory.run(portal, owner=user)
    job = await factory.job(
        run,
        status=JobStatus.FAILED,
        last_error="ConnectionRefusedError: db.internal:5432",
        last_error_public="failed; the operators have the details",
    )
    await _refused(api_login_pool, "grants_job_errors", as_user=user)
    await _refused(api_login_pool, "grants_job_lockers", as_user=user)
    rows = await query_as(api_login_pool, "grants_job_notes", as_user=user)
    assert rows == [{"id": job.id, "last_error_public": "failed; the operators have the details"}]


async def test_the_api_writes_no_schedules(factory: Factory, api_login_pool: Pool) -> None:
    user = await factory.user()
    portal = await factory.portal(user)
    await factory.schedule(portal, owner=user)
    await _refused(api_login_pool, "grants_add_schedule", as_user=user, portal_id=portal)
    await _refused(api_login_pool, "grants_enable_schedules", as_user=user, portal_id=portal)


async def test_the_api_writes_only_the_runs_columns_it_creates_a_run_with(
    factory: Factory, api_login_pool: Pool
) -> None:
    user = await factory.user()
    portal = await factory.portal(user)
    await factory.run(portal, owner=user)
    await _refused(api_login_pool, "grants_create_finished_run", as_user=user, portal_id=portal)
    await _refused(api_login_pool, "grants_finish_runs", as_user=user, portal_id=portal)
