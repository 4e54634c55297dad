-- The dashboard's confirmations kept in the database, and a portal's viewers kept to reading.
--
-- Table:
--   dashboard_confirmations  one row per confirmation page the dashboard showed and nobody
--                            has acted on yet: the action and its target it was shown for,
--                            the session it was shown to, until when it may be acted on.
--                            The action's POST deletes the row (DELETE … RETURNING) in the
--                            transaction that acts, so a replay, a second dashboard process
--                            or a double click finds nothing and acts not. Only the hash of
--                            the form's nonce is stored. Like operator_actions it is the login
--                            role's (the dashboard runs as it); no runtime role sees it.
--
-- Member roles. A portal's members are owners, editors or viewers (portal_members.role). The
-- API runs as smuves_app; until now any member could start fetches and exports and stop runs.
-- Only owners and editors may now, and the database says so, whatever the API asks:
--   editor_portal_ids()   the portals in which the session's user is an owner or editor
--   <table>_app_editor_*  RESTRICTIVE policies for smuves_app: a new run or export (and a
--                         change of an export or a schedule) only in those portals. Reading
--                         is unchanged: viewers see everything they saw.
--   enqueue_job_v2        the API's jobs only in those portals (the workers' branch and the
--                         operator's are unchanged)
--   stop_run              a member who is not an owner or editor is refused
-- A refusal is insufficient_privilege and names `portal_app_editor`: the policy's name is in
-- the message, the functions' errors carry it as their constraint, so the gateway
-- (Database.as_user) can tell it from other refusals and the API answer 403 FORBIDDEN.

SET LOCAL ROLE smuves_owner;

CREATE TABLE public.dashboard_confirmations (
    -- sha256 (hex) of the nonce the confirmation page's form carries: never the nonce
    nonce_hash  text PRIMARY KEY
                CONSTRAINT dashboard_confirmations_hash_hex CHECK (nonce_hash ~ '^[0-9a-f]{64}$'),
    -- the session it was shown to (the opaque id operator_actions records)
    session     text NOT NULL,
    action      text NOT NULL
                CONSTRAINT dashboard_confirmations_action_word CHECK (action ~ '^[a-z][a-z_]*$'),
    -- what the action is done to, as the action's audit row names it
    target      jsonb NOT NULL,
    expires_at  timestamptz NOT NULL
);
-- Issuing a confirmation forgets the expired ones: a range of this index.
CREATE INDEX dashboard_confirmations_expires_idx ON public.dashboard_confirmations (expires_at);

ALTER TABLE public.dashboard_confirmations ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.dashboard_confirmations FORCE ROW LEVEL SECURITY;
CREATE POLICY dashboard_confirmations_owner_all ON public.dashboard_confirmations
    TO smuves_owner USING (true) WITH CHECK (true);

-- The portals in which the session's user may change things: an owner's or an editor's
-- membership, or the portal's owner_id. SECURITY DEFINER as member_portal_ids is, so that
-- policies can use it without recursing into portal_members' own.
CREATE FUNCTION public.editor_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user() AND m.role IN ('owner', 'editor')
        UNION
        SELECT p.id FROM public.portals AS p WHERE p.owner_id = public.current_app_user()
    $$;
GRANT EXECUTE ON FUNCTION public.editor_portal_ids() TO smuves_app;

-- RESTRICTIVE: the permissive policies of row-level security still decide which portals a
-- user sees at all (a stranger's portal fails those first); these narrow what a member may
-- write. One per command, so that SELECT stays as it was.
CREATE POLICY runs_app_editor_insert ON public.runs AS RESTRICTIVE
    FOR INSERT TO smuves_app
    WITH CHECK (portal_id IN (SELECT public.editor_portal_ids()));
CREATE POLICY exports_app_editor_insert ON public.exports AS RESTRICTIVE
    FOR INSERT TO smuves_app
    WITH CHECK (portal_id IN (SELECT public.editor_portal_ids()));
CREATE POLICY exports_app_editor_update ON public.exports AS RESTRICTIVE
    FOR UPDATE TO smuves_app
    USING (portal_id IN (SELECT public.editor_portal_ids()))
    WITH CHECK (portal_id IN (SELECT public.editor_portal_ids()));
-- A schedule starts fetches too, as its owner.
CREATE POLICY schedules_app_editor_insert ON public.schedules AS RESTRICTIVE
    FOR INSERT TO smuves_app
    WITH CHECK (portal_id IN (SELECT public.editor_portal_ids()));
CREATE POLICY schedules_app_editor_update ON public.schedules AS RESTRICTIVE
    FOR UPDATE TO smuves_app
    USING (portal_id IN (SELECT public.editor_portal_ids()))
    WITH CHECK (portal_id IN (SELECT public.editor_portal_ids()));
CREATE POLICY schedules_app_editor_delete ON public.schedules AS RESTRICTIVE
    FOR DELETE TO smuves_app
    USING (portal_id IN (SELECT public.editor_portal_ids()));

-- enqueue_job_v2 as owner_fairness left it, but the API may add jobs only to the runs of the
-- portals it may change (editor_portal_ids); a viewer is told so. Placement in line, the
-- workers' schedule branch and the operator's are unchanged.
CREATE OR REPLACE FUNCTION public.enqueue_job_v2(
    p_run_id bigint,
    p_content_type text,
    p_priority smallint DEFAULT 0,
    p_max_attempts integer DEFAULT 3,
    p_run_after timestamptz DEFAULT NULL,
    p_total bigint DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_schedule_id bigint DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_run public.runs;
        v_operator boolean := public.operator_session();
        v_run_after timestamptz := coalesce(p_run_after, now());
        v_priority smallint := coalesce(p_priority, 0);
        v_ahead bigint;
        v_busy bigint;
    BEGIN
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF NOT v_operator THEN
            v_run_after := greatest(v_run_after, now());
            IF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
               AND v_run.portal_id IN (SELECT public.editor_portal_ids()) THEN
                v_priority := least(v_priority, 20);
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
                  AND v_run.portal_id IN (SELECT public.member_portal_ids()) THEN
                RAISE EXCEPTION 'enqueue_job: only the owners and editors of portal % may start '
                                'its fetches and exports; a viewer may only read',
                                v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_worker', 'USAGE')
                  AND v_run.kind = 'fetch'
                  AND EXISTS (SELECT FROM public.schedules AS s
                              WHERE s.id = p_schedule_id
                                AND s.portal_id = v_run.portal_id
                                AND s.enabled
                                AND s.next_run_at <= now()
                                AND s.owner_id IS NOT DISTINCT FROM v_run.owner_id
                                AND p_content_type = ANY (s.content_types::text[])) THEN
                v_priority := least(v_priority, 0);
            ELSE
                RAISE EXCEPTION 'enqueue_job: this login may not add jobs to run % of portal %',
                                p_run_id, v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
        END IF;

        -- The portal's jobs in flight: a walk of jobs_in_flight_uniq, a few rows at most.
        SELECT count(*) INTO v_ahead FROM public.jobs AS j
        WHERE j.portal_id = v_run.portal_id AND j.status IN ('pending', 'running');
        -- The owner's busy portals, this one included: portals_owner_idx, then a probe of
        -- jobs_in_flight_uniq per portal of the owner.
        SELECT count(*) INTO v_busy FROM public.portals AS p
        WHERE p.owner_id = (SELECT o.owner_id FROM public.portals AS o
                            WHERE o.id = v_run.portal_id)
          AND (p.id = v_run.portal_id
               OR EXISTS (SELECT FROM public.jobs AS b
                          WHERE b.portal_id = p.id AND b.status IN ('pending', 'running')));

        RETURN QUERY
        INSERT INTO public.jobs AS j (run_id, portal_id, kind, content_type, max_attempts,
                                      run_after, total, idempotency_key, priority, fair_at)
        VALUES (v_run.id, v_run.portal_id, v_run.kind, p_content_type, p_max_attempts,
                v_run_after, p_total, p_idempotency_key, v_priority,
                v_run_after + (v_ahead * v_busy + v_busy - 1) * interval '10 seconds')
        ON CONFLICT DO NOTHING
        RETURNING j.*;
    END
    $$;

-- Stop run p_run_id (run_to_stopped) if it belongs to one of the caller's portals and the
-- caller is an owner or editor there. Returns the run as it is afterwards; no row: not
-- visible. A viewer is refused (portal_app_editor) and nothing changes.
CREATE OR REPLACE FUNCTION public.stop_run(p_run_id bigint, p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_portal_id bigint;
    BEGIN
        -- The definer sees every row: check the caller's membership explicitly.
        SELECT r.portal_id INTO v_portal_id FROM public.runs AS r
        WHERE r.id = p_run_id AND r.portal_id IN (SELECT public.member_portal_ids());
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF v_portal_id NOT IN (SELECT public.editor_portal_ids()) THEN
            RAISE EXCEPTION 'stop_run: only the owners and editors of portal % may stop its '
                            'runs; a viewer may only read', v_portal_id
                USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
        END IF;
        RETURN QUERY SELECT * FROM public.run_to_stopped(p_run_id, 'stopped on request', p_now);
    END
    $$;
