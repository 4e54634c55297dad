-- Who the session is (the row-level security helpers), and the policies that use them.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- The caller (app.user_id) as an app_users row, created when missing. `p_email` is the
-- token's email claim, and it counts only when `p_email_verified` (the token's email_verified
-- claim) says the identity provider checked it: an unverified claim is never stored, so it
-- can never match an email the operator names later. A verified email, lower-cased:
--   a first sign-in takes over the row the operator invited with that email (`smuves portal
--   add --owner`), with its portals; else it becomes the new row's email when nobody has it;
--   a known user gets it when it changed and nobody has it.
-- A row without a usable email gets the placeholder '<id>@users.invalid' (app_users.email is
-- NOT NULL UNIQUE).
CREATE OR REPLACE FUNCTION public.app_user_sign_in(p_email text DEFAULT NULL::text, p_email_verified boolean DEFAULT false) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    DECLARE
        v_id uuid := public.current_app_user();
        v_email text := CASE WHEN p_email_verified AND btrim(p_email) ~ '^[^@\s]+@[^@\s]+$'
                             THEN lower(btrim(p_email)) END;
        v_current text;
    BEGIN
        IF v_id IS NULL THEN
            RAISE EXCEPTION 'app_user_sign_in: app.user_id is not set'
                USING ERRCODE = 'insufficient_privilege';
        END IF;

        SELECT u.email INTO v_current FROM public.app_users AS u WHERE u.id = v_id;
        IF FOUND THEN
            -- The common case: a known user, nothing to write.
            IF v_email IS NOT NULL AND v_email IS DISTINCT FROM v_current
               AND NOT EXISTS (SELECT FROM public.app_users AS u WHERE u.email = v_email) THEN
                BEGIN
                    UPDATE public.app_users AS u SET email = v_email, invited = false
                    WHERE u.id = v_id;
                EXCEPTION WHEN unique_violation THEN
                    NULL;  -- another account took that email a moment ago: keep ours
                END;
            END IF;
            RETURN v_id;
        END IF;

        IF v_email IS NOT NULL THEN
            -- Invited by the operator: the row becomes this user's (its portals, memberships,
            -- runs, schedules and notifications follow the id). A concurrent first request of
            -- the same user waits for the row lock, then finds it taken and goes on below.
            UPDATE public.app_users AS u SET id = v_id, invited = false
            WHERE u.email = v_email AND u.invited;
            IF FOUND THEN
                RETURN v_id;
            END IF;
        END IF;

        -- DO NOTHING without a target: neither a concurrent first request of the same user
        -- (id) nor another account with this email (email) raises.
        INSERT INTO public.app_users (id, email)
        VALUES (v_id, coalesce(v_email, v_id::text || '@users.invalid'))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            INSERT INTO public.app_users (id, email)
            VALUES (v_id, v_id::text || '@users.invalid')
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN v_id;
    END
    $_$;



SET default_tablespace = '';

SET default_table_access_method = heap;
REVOKE ALL ON FUNCTION public.app_user_sign_in(p_email text, p_email_verified boolean) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.app_user_sign_in(p_email text, p_email_verified boolean) TO smuves_app;

CREATE OR REPLACE FUNCTION public.current_app_portal() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.portal_id', true), '')::bigint $$;
REVOKE ALL ON FUNCTION public.current_app_portal() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.current_app_portal() TO smuves_worker;

-- The session's user and portal. An unset setting reads as NULL and matches nothing; a
-- setting made with is_local = true reads as '' after its transaction ends, hence nullif.
CREATE OR REPLACE FUNCTION public.current_app_user() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.user_id', true), '')::uuid $$;
REVOKE ALL ON FUNCTION public.current_app_user() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.current_app_user() TO smuves_app;

-- The portals in which the session's user may change things: an owner's or an editor's
-- membership, or the portal's owner_id. SECURITY DEFINER as member_portal_ids is, so that
-- policies can use it without recursing into portal_members' own.
CREATE OR REPLACE FUNCTION public.editor_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user() AND m.role IN ('owner', 'editor')
        UNION
        SELECT p.id FROM public.portals AS p WHERE p.owner_id = public.current_app_user()
    $$;
REVOKE ALL ON FUNCTION public.editor_portal_ids() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.editor_portal_ids() TO smuves_app;

-- The portals of the session's user. SECURITY DEFINER so that the portal_members policy
-- can use it without recursing into itself.
CREATE OR REPLACE FUNCTION public.member_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user()
    $$;
REVOKE ALL ON FUNCTION public.member_portal_ids() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.member_portal_ids() TO smuves_app;

-- Whether this session logged in as a role that may act as smuves_owner: the operator's own
-- login (migrations, on-call commands) or a superuser (the test harness), never a runtime
-- login (smuves_api_login and smuves_worker_login belong to their group role only). The
-- login counts, not a SET ROLE: the tests' pools, a trusted login that took a runtime
-- role's rights, stay trusted; a runtime login can never become trusted.
CREATE OR REPLACE FUNCTION public.operator_session() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT pg_catalog.pg_has_role(session_user, 'smuves_owner', 'MEMBER') $$;
REVOKE ALL ON FUNCTION public.operator_session() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.operator_session() TO smuves_worker;

-- Whether this transaction holds a live lease on a job of the portal it names (see above).
-- SECURITY DEFINER: the worker may not read jobs.lease_token. STABLE, no argument: a policy
-- wraps it in a sub-select, evaluated once per statement. plpgsql, not sql: a sql function
-- that cannot be inlined (SECURITY DEFINER, SET) plans its query again in every statement
-- that calls it, which cost the page write a tenth of its time or more; plpgsql keeps the plan for
-- the session.
CREATE OR REPLACE FUNCTION public.worker_holds_lease() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RETURN EXISTS (
            SELECT FROM public.jobs AS j
            JOIN public.job_leases AS l ON l.kind = j.kind
            WHERE j.id = nullif(current_setting('app.job_id', true), '')::bigint
              AND j.lease_token = nullif(current_setting('app.lease_token', true), '')::uuid
              AND j.portal_id = public.current_app_portal()
              AND j.status = 'running'
              AND j.heartbeat_at >= now() - l.lease);
    END
    $$;
REVOKE ALL ON FUNCTION public.worker_holds_lease() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.worker_holds_lease() TO smuves_worker;

-- Whether a worker login may create this run: the scheduler's, for a due schedule. Runs with
-- its caller's rights: the schedules it looks at are those of the worker's portal.
CREATE OR REPLACE FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT public.operator_session()
            OR (p_kind = 'fetch'
                AND EXISTS (SELECT FROM public.schedules AS s
                            WHERE s.portal_id = p_portal_id
                              AND s.enabled
                              AND s.next_run_at <= now()
                              AND s.owner_id IS NOT DISTINCT FROM p_owner_id
                              AND p_types <@ s.content_types::text[]))
    $$;
REVOKE ALL ON FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) TO smuves_worker;

-- Row-level security policies. They use the helpers above, so they live beside them and are
-- dropped and made again on each re-application.

DROP POLICY IF EXISTS app_users_app ON public.app_users;
CREATE POLICY app_users_app ON public.app_users TO smuves_app USING (((id = public.current_app_user()) OR (id IN ( SELECT m.user_id
   FROM public.portal_members m
  WHERE (m.portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))))));

DROP POLICY IF EXISTS app_users_owner_all ON public.app_users;
CREATE POLICY app_users_owner_all ON public.app_users TO smuves_owner USING (true) WITH CHECK (true);

-- Changesets: members read their portals'; an owner or editor inserts them as their owner, with
-- items not yet pushed (state pending, unchanged or invalid). A worker reads and updates them
-- only under a live lease of one of the portal's jobs, as it does content.
DROP POLICY IF EXISTS changeset_items_app ON public.changeset_items;
CREATE POLICY changeset_items_app ON public.changeset_items TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS changeset_items_app_editor_insert ON public.changeset_items;
CREATE POLICY changeset_items_app_editor_insert ON public.changeset_items AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK (((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)) AND (state = ANY (ARRAY['pending'::text, 'unchanged'::text, 'invalid'::text]))));

DROP POLICY IF EXISTS changeset_items_owner_all ON public.changeset_items;
CREATE POLICY changeset_items_owner_all ON public.changeset_items TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS changeset_items_worker ON public.changeset_items;
CREATE POLICY changeset_items_worker ON public.changeset_items TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS changeset_items_worker_lease ON public.changeset_items;
CREATE POLICY changeset_items_worker_lease ON public.changeset_items AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS changesets_app ON public.changesets;
CREATE POLICY changesets_app ON public.changesets TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS changesets_app_editor_insert ON public.changesets;
CREATE POLICY changesets_app_editor_insert ON public.changesets AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK (((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)) AND (owner_id = public.current_app_user())));

DROP POLICY IF EXISTS changesets_owner_all ON public.changesets;
CREATE POLICY changesets_owner_all ON public.changesets TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS changesets_worker ON public.changesets;
CREATE POLICY changesets_worker ON public.changesets TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS changesets_worker_lease ON public.changesets;
CREATE POLICY changesets_worker_lease ON public.changesets AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_items_app ON public.content_items;
CREATE POLICY content_items_app ON public.content_items TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS content_items_owner_all ON public.content_items;
CREATE POLICY content_items_owner_all ON public.content_items TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS content_items_worker ON public.content_items;
CREATE POLICY content_items_worker ON public.content_items TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS content_items_worker_lease ON public.content_items;
CREATE POLICY content_items_worker_lease ON public.content_items AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_rejects_app ON public.content_rejects;
CREATE POLICY content_rejects_app ON public.content_rejects TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS content_rejects_owner_all ON public.content_rejects;
CREATE POLICY content_rejects_owner_all ON public.content_rejects TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS content_rejects_worker ON public.content_rejects;
CREATE POLICY content_rejects_worker ON public.content_rejects TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS content_rejects_worker_lease_insert ON public.content_rejects;
CREATE POLICY content_rejects_worker_lease_insert ON public.content_rejects AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_rejects_worker_lease_select ON public.content_rejects;
CREATE POLICY content_rejects_worker_lease_select ON public.content_rejects AS RESTRICTIVE FOR SELECT TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_syncs_app ON public.content_syncs;
CREATE POLICY content_syncs_app ON public.content_syncs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS content_syncs_owner_all ON public.content_syncs;
CREATE POLICY content_syncs_owner_all ON public.content_syncs TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS content_syncs_worker ON public.content_syncs;
CREATE POLICY content_syncs_worker ON public.content_syncs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS content_syncs_worker_lease_insert ON public.content_syncs;
CREATE POLICY content_syncs_worker_lease_insert ON public.content_syncs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_syncs_worker_lease_update ON public.content_syncs;
CREATE POLICY content_syncs_worker_lease_update ON public.content_syncs AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS content_versions_app ON public.content_versions;
CREATE POLICY content_versions_app ON public.content_versions TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS content_versions_owner_all ON public.content_versions;
CREATE POLICY content_versions_owner_all ON public.content_versions TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS content_versions_worker ON public.content_versions;
CREATE POLICY content_versions_worker ON public.content_versions TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS content_versions_worker_lease_select ON public.content_versions;
CREATE POLICY content_versions_worker_lease_select ON public.content_versions AS RESTRICTIVE FOR SELECT TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS dashboard_confirmations_owner_all ON public.dashboard_confirmations;
CREATE POLICY dashboard_confirmations_owner_all ON public.dashboard_confirmations TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS exports_app ON public.exports;
CREATE POLICY exports_app ON public.exports TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS exports_app_editor_insert ON public.exports;
CREATE POLICY exports_app_editor_insert ON public.exports AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS exports_app_editor_update ON public.exports;
CREATE POLICY exports_app_editor_update ON public.exports AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS exports_owner_all ON public.exports;
CREATE POLICY exports_owner_all ON public.exports TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS exports_worker ON public.exports;
CREATE POLICY exports_worker ON public.exports TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS exports_worker_lease_insert ON public.exports;
CREATE POLICY exports_worker_lease_insert ON public.exports AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS exports_worker_lease_update ON public.exports;
CREATE POLICY exports_worker_lease_update ON public.exports AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS fetch_reads_app ON public.fetch_reads;
CREATE POLICY fetch_reads_app ON public.fetch_reads TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS fetch_reads_owner_all ON public.fetch_reads;
CREATE POLICY fetch_reads_owner_all ON public.fetch_reads TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS fetch_reads_worker ON public.fetch_reads;
CREATE POLICY fetch_reads_worker ON public.fetch_reads TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS fetch_reads_worker_lease_insert ON public.fetch_reads;
CREATE POLICY fetch_reads_worker_lease_insert ON public.fetch_reads AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS fetch_reads_worker_lease_update ON public.fetch_reads;
CREATE POLICY fetch_reads_worker_lease_update ON public.fetch_reads AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS fetch_seen_owner_all ON public.fetch_seen;
CREATE POLICY fetch_seen_owner_all ON public.fetch_seen TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS fetch_seen_worker ON public.fetch_seen;
CREATE POLICY fetch_seen_worker ON public.fetch_seen TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS fetch_seen_worker_lease ON public.fetch_seen;
CREATE POLICY fetch_seen_worker_lease ON public.fetch_seen AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));

DROP POLICY IF EXISTS hubspot_minutes_owner_all ON public.hubspot_minutes;
CREATE POLICY hubspot_minutes_owner_all ON public.hubspot_minutes TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS jobs_app ON public.jobs;
CREATE POLICY jobs_app ON public.jobs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS jobs_owner_all ON public.jobs;
CREATE POLICY jobs_owner_all ON public.jobs TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS jobs_worker ON public.jobs;
CREATE POLICY jobs_worker ON public.jobs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS notifications_app ON public.notifications;
CREATE POLICY notifications_app ON public.notifications TO smuves_app USING ((user_id = public.current_app_user()));

DROP POLICY IF EXISTS notifications_owner_all ON public.notifications;
CREATE POLICY notifications_owner_all ON public.notifications TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS notifications_worker ON public.notifications;
CREATE POLICY notifications_worker ON public.notifications TO smuves_worker USING ((run_id IN ( SELECT r.id
   FROM public.runs r
  WHERE (r.portal_id = public.current_app_portal())))) WITH CHECK ((run_id IN ( SELECT r.id
   FROM public.runs r
  WHERE (r.portal_id = public.current_app_portal()))));

DROP POLICY IF EXISTS notifications_worker_schedule ON public.notifications;
CREATE POLICY notifications_worker_schedule ON public.notifications TO smuves_worker USING ((schedule_id IN ( SELECT s.id
   FROM public.schedules s
  WHERE (s.portal_id = public.current_app_portal())))) WITH CHECK ((schedule_id IN ( SELECT s.id
   FROM public.schedules s
  WHERE (s.portal_id = public.current_app_portal()))));

DROP POLICY IF EXISTS operator_actions_owner_all ON public.operator_actions;
CREATE POLICY operator_actions_owner_all ON public.operator_actions TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS portal_members_app ON public.portal_members;
CREATE POLICY portal_members_app ON public.portal_members TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS portal_members_owner_all ON public.portal_members;
CREATE POLICY portal_members_owner_all ON public.portal_members TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS portals_app ON public.portals;
CREATE POLICY portals_app ON public.portals TO smuves_app USING (((id IN ( SELECT public.member_portal_ids() AS member_portal_ids)) OR (owner_id = public.current_app_user()))) WITH CHECK (((owner_id = public.current_app_user()) OR (id IN ( SELECT public.member_portal_ids() AS member_portal_ids))));

DROP POLICY IF EXISTS portals_app_delete_owner ON public.portals;
CREATE POLICY portals_app_delete_owner ON public.portals AS RESTRICTIVE FOR DELETE TO smuves_app USING ((owner_id = public.current_app_user()));

DROP POLICY IF EXISTS portals_app_update_owner ON public.portals;
CREATE POLICY portals_app_update_owner ON public.portals AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((owner_id = public.current_app_user())) WITH CHECK ((owner_id = public.current_app_user()));

DROP POLICY IF EXISTS portals_owner_all ON public.portals;
CREATE POLICY portals_owner_all ON public.portals TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS portals_worker ON public.portals;
CREATE POLICY portals_worker ON public.portals TO smuves_worker USING ((id = public.current_app_portal()));

DROP POLICY IF EXISTS runs_app ON public.runs;
CREATE POLICY runs_app ON public.runs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS runs_app_editor_insert ON public.runs;
CREATE POLICY runs_app_editor_insert ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS runs_owner_all ON public.runs;
CREATE POLICY runs_owner_all ON public.runs TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS runs_worker ON public.runs;
CREATE POLICY runs_worker ON public.runs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS runs_worker_create_scheduled ON public.runs;
CREATE POLICY runs_worker_create_scheduled ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (public.worker_may_create_run(portal_id, owner_id, kind, (content_types)::text[]));

DROP POLICY IF EXISTS runs_worker_full_read ON public.runs;
CREATE POLICY runs_worker_full_read ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (((NOT full_read) OR public.operator_session()));

DROP POLICY IF EXISTS schedules_app ON public.schedules;
CREATE POLICY schedules_app ON public.schedules TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));

DROP POLICY IF EXISTS schedules_app_editor_delete ON public.schedules;
CREATE POLICY schedules_app_editor_delete ON public.schedules AS RESTRICTIVE FOR DELETE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS schedules_app_editor_insert ON public.schedules;
CREATE POLICY schedules_app_editor_insert ON public.schedules AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS schedules_app_editor_update ON public.schedules;
CREATE POLICY schedules_app_editor_update ON public.schedules AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));

DROP POLICY IF EXISTS schedules_owner_all ON public.schedules;
CREATE POLICY schedules_owner_all ON public.schedules TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS schedules_worker ON public.schedules;
CREATE POLICY schedules_worker ON public.schedules TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));

DROP POLICY IF EXISTS workers_owner_all ON public.workers;
CREATE POLICY workers_owner_all ON public.workers TO smuves_owner USING (true) WITH CHECK (true);

-- A push job's: the helper push_job_changeset is in functions/push.sql.
-- A worker settles the items of one changeset only: the one its push job works, under that
-- job's lease (changeset_items_worker and _worker_lease let it see its portal's, as it reads).
DROP POLICY IF EXISTS changeset_items_worker_push ON public.changeset_items;
CREATE POLICY changeset_items_worker_push ON public.changeset_items AS RESTRICTIVE FOR UPDATE TO smuves_worker USING ((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset))) WITH CHECK ((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)));

DROP POLICY IF EXISTS push_intents_owner_all ON public.push_intents;
CREATE POLICY push_intents_owner_all ON public.push_intents TO smuves_owner USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS push_intents_worker_push ON public.push_intents;
CREATE POLICY push_intents_worker_push ON public.push_intents TO smuves_worker USING (((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)) AND (portal_id = public.current_app_portal()))) WITH CHECK (((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)) AND (portal_id = public.current_app_portal()) AND (job_id = (nullif(current_setting('app.job_id'::text, true), ''::text))::bigint)));
