-- Least privilege for the runtime roles, and a database only this install's logins reach.
--
-- smuves_app (the HTTP API) and smuves_worker (the workers) keep exactly the tables, columns
-- and functions their code uses; everything else granted to them before is revoked here. The
-- catalog test tests/integration/test_runtime_grants.py lists what remains, so a new grant is
-- made on purpose. The exports table is not touched here.
--
-- What each role no longer has, and why it never needed it:
--
-- smuves_app     jobs.last_error (the operators' account of a failure: the API shows
--                last_error_public), locked_by, locked_at, heartbeat_at, cursor and
--                idempotency_key (the workers' bookkeeping); writing any column of runs
--                but those run_create writes, reading full_read; schedules (the API has no
--                schedules: `smuves schedule` and the dashboard run as the operator);
--                app_users (sign-in is app_user_sign_in); job_leases;
--                the parts of portals, portal_members, content_items, content_syncs and
--                content_rejects its queries do not read; current_app_portal().
-- smuves_worker  member_portal_ids() and current_app_user() (whose portals a user is a
--                member of: the worker's policies key on its portal, not on users); every
--                column of portals but id (a fetch starts for a portal that exists; its
--                token comes from portal_token); notifications and content_versions (written
--                by the queue's functions and triggers, read by the API and the operator);
--                reading content_rejects (it records them); deleting content_items (a fetch
--                marks objects deleted); the schedules columns worker_may_create_run does not
--                read; claim_next_job_v2, complete_job, complete_jobs and run_rejects_note,
--                which no worker calls.

-- Roles are the whole server's: without this every login of the server may connect here,
-- another install's runtime logins among them. The migration runner grants CONNECT to this
-- install's own logins (`SMUVES_ROLE_PREFIX`) once the migrations are applied. Run as the
-- migrating login, which owns the database or is a superuser; any other keeps its way in.
DO $$
DECLARE
    v_database text := pg_catalog.current_database();
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user
                                                           AND r.rolsuper)
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_database AS d
                       WHERE d.datname = v_database
                         AND pg_catalog.pg_has_role(current_user, d.datdba, 'MEMBER')) THEN
        EXECUTE pg_catalog.format('GRANT CONNECT ON DATABASE %I TO %I', v_database,
                                  current_user);
    END IF;
    EXECUTE pg_catalog.format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', v_database);
END
$$;

SET LOCAL ROLE smuves_owner;

-- smuves_app ------------------------------------------------------------------------------

REVOKE ALL ON public.app_users, public.job_leases, public.schedules FROM smuves_app;

-- portal_access_list, portal_connect, portal_reconnect, portal_get, portal_delete.
REVOKE SELECT ON public.portals FROM smuves_app;
REVOKE SELECT (id, name, owner_id, time_zone, created_at) ON public.portals FROM smuves_app;
GRANT SELECT (id, name, owner_id, created_at) ON public.portals TO smuves_app;

-- portal_access_list: the caller's role in each portal.
REVOKE SELECT ON public.portal_members FROM smuves_app;
GRANT SELECT (portal_id, user_id, role) ON public.portal_members TO smuves_app;

-- run_create, run_get, run_detail, run_stop's answer, versions_changes.
REVOKE ALL ON public.runs FROM smuves_app;
GRANT SELECT (id, portal_id, owner_id, kind, status, content_types, created_at, started_at,
              finished_at)
ON public.runs TO smuves_app;
GRANT INSERT (portal_id, owner_id, kind, content_types, full_read) ON public.runs TO smuves_app;

-- run_detail and job_list_in_flight: progress and the users' note, not the operators' error
-- nor the workers' lease, cursor and keys.
REVOKE SELECT (locked_at, locked_by, heartbeat_at, cursor, last_error, idempotency_key)
ON public.jobs FROM smuves_app;

-- content_page, content_language_groups, version_documents, versions_changes.
REVOKE SELECT ON public.content_items FROM smuves_app;
GRANT SELECT (portal_id, content_type, hubspot_id, name, slug, url, state, language,
              hubspot_updated_at, archived, deleted_at, data, content_hash, changed_at,
              translated_from_id)
ON public.content_items TO smuves_app;

-- content_page's and content_language_groups' synced_at; fetch_read_bases.
REVOKE SELECT ON public.content_syncs FROM smuves_app;
GRANT SELECT (portal_id, content_type, confirmed_at, listing_started_at, last_full_listing_at)
ON public.content_syncs TO smuves_app;

-- run_rejects and run_rejects_note: counts and reasons, never the objects' bytes.
REVOKE SELECT ON public.content_rejects FROM smuves_app;
GRANT SELECT (run_id, content_type, reason) ON public.content_rejects TO smuves_app;

REVOKE EXECUTE ON FUNCTION public.current_app_portal() FROM smuves_app;

-- smuves_worker ---------------------------------------------------------------------------

REVOKE ALL ON public.notifications, public.content_versions FROM smuves_worker;

-- orchestrator.start_fetch asks whether the portal exists (portal_exists).
REVOKE SELECT ON public.portals FROM smuves_worker;
REVOKE SELECT (id, name, owner_id, time_zone, created_at) ON public.portals FROM smuves_worker;
GRANT SELECT (id) ON public.portals TO smuves_worker;

-- content_rejects_add only.
REVOKE SELECT ON public.content_rejects FROM smuves_worker;

REVOKE DELETE ON public.content_items FROM smuves_worker;

-- worker_may_create_run (the runs_worker_create_scheduled policy) runs as the worker.
REVOKE SELECT ON public.schedules FROM smuves_worker;
GRANT SELECT (portal_id, owner_id, content_types, enabled, next_run_at)
ON public.schedules TO smuves_worker;

REVOKE EXECUTE ON FUNCTION
    public.member_portal_ids(),
    public.current_app_user(),
    public.claim_next_job_v2(text, text[], timestamptz, integer),
    public.complete_job(bigint, uuid, bigint, timestamptz),
    public.complete_jobs(bigint[], uuid[], bigint[], timestamptz),
    public.run_rejects_note(bigint)
FROM smuves_worker;
