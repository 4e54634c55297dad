-- What the HTTP API (smuves_app) needs beyond 0003:
-- * app_user_sign_in: a user named by a verified token's `sub` appears in app_users on their
--   first request (smuves_app may not write app_users itself);
-- * stop_run: stop a run of one of the caller's portals (run_to_stopped, which the operators'
--   dashboard calls for any run); its open jobs end `stopped`, and a worker still running
--   one loses its lease at its next heartbeat, checkpoint or finish (every fenced function
--   of 0004 requires status = 'running');
-- * metrics_jobs / metrics_job_durations: queue figures across every tenant for /metrics,
--   counts and seconds only, never a row;
-- * owners may delete their portals (everything of the portal goes with it, by cascade);
-- * /healthz compares the applied migration versions with the files.
--
-- Same conventions as 0004: owned by smuves_owner, SECURITY DEFINER functions pin
-- search_path, qualify every table, and are executable by smuves_app only.

SET LOCAL ROLE smuves_owner;

-- The caller (app.user_id) as an app_users row, created when missing. `p_email` is the
-- token's email claim: kept when it is well formed and free; otherwise the row gets a
-- placeholder '<id>@users.invalid' (app_users.email is NOT NULL UNIQUE). A known user whose
-- email claim changed gets the new one, if nobody else has it.
CREATE FUNCTION public.app_user_sign_in(p_email text DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_id uuid := public.current_app_user();
        v_email text := CASE WHEN btrim(p_email) ~ '^[^@\s]+@[^@\s]+$' THEN btrim(p_email) END;
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
                    UPDATE public.app_users AS u SET email = v_email WHERE u.id = v_id;
                EXCEPTION WHEN unique_violation THEN
                    NULL;  -- another account took that email a moment ago: keep ours
                END;
            END IF;
            RETURN v_id;
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
    $$;

-- Stop run p_run_id, whoever asks (its callers decide who may): its pending and running jobs
-- become stopped, with p_reason as their error unless they have one (lease columns kept as
-- the record of who ran them), then the run is settled like any other (a stopped job makes
-- it stopped). Jobs are locked before the run, the order claim_jobs and complete_jobs use, so
-- a concurrent claim or finish cannot deadlock with a stop. Returns the run as it is
-- afterwards; no row: no such run. Written once for stop_run (a tenant, through the API) and
-- the operators' dashboard (the login role, any run).
CREATE FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamptz)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
    BEGIN
        -- Lock the open jobs in id order before updating them: two stops of one run then
        -- queue up behind each other instead of locking jobs in opposite orders (deadlock).
        PERFORM FROM public.jobs AS j
        WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running')
        ORDER BY j.id
        FOR UPDATE;

        UPDATE public.jobs AS j
        SET status = 'stopped',
            finished_at = v_now,
            last_error = coalesce(j.last_error, p_reason)
        WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running');

        PERFORM public.settle_runs(ARRAY[p_run_id], v_now);
        RETURN QUERY SELECT * FROM public.runs AS r WHERE r.id = p_run_id;
    END
    $$;

-- Stop run p_run_id (run_to_stopped) if it belongs to one of the caller's portals. Returns
-- the run as it is afterwards; no row: not visible.
CREATE FUNCTION public.stop_run(p_run_id bigint, p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        -- The definer sees every row: check the caller's membership explicitly.
        IF NOT EXISTS (SELECT FROM public.runs AS r
                       WHERE r.id = p_run_id
                         AND r.portal_id IN (SELECT public.member_portal_ids())) THEN
            RETURN;
        END IF;
        RETURN QUERY SELECT * FROM public.run_to_stopped(p_run_id, 'stopped on request', p_now);
    END
    $$;

-- Jobs by kind and status, and for each kind the age of its oldest due pending job (a job
-- waiting for a later run_after, after a backoff or a parked rate limit, is not late).
CREATE FUNCTION public.metrics_jobs(p_now timestamptz DEFAULT NULL)
    RETURNS TABLE (kind text, status text, jobs bigint, oldest_pending_seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT j.kind::text, j.status::text, count(*),
               extract(epoch FROM coalesce(p_now, now())
                                  - min(j.run_after) FILTER (
                                        WHERE j.status = 'pending'
                                          AND j.run_after <= coalesce(p_now, now())))::float8
        FROM public.jobs AS j
        GROUP BY j.kind, j.status
    $$;

-- Finished jobs by kind, status and duration bucket (created to finished, queue wait
-- included). bucket = how many of p_bounds (ascending) are below the duration, so bucket i
-- holds the durations in (p_bounds[i], p_bounds[i+1]]: Prometheus' `le` buckets.
CREATE FUNCTION public.metrics_job_durations(p_bounds double precision[])
    RETURNS TABLE (kind text, status text, bucket integer, jobs bigint,
                   seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT d.kind, d.status,
               (SELECT count(*) FROM unnest(p_bounds) AS b WHERE b < d.seconds)::integer,
               count(*), sum(d.seconds)
        FROM (SELECT j.kind::text AS kind, j.status::text AS status,
                     greatest(extract(epoch FROM j.finished_at - j.created_at)::float8, 0)
                         AS seconds
              FROM public.jobs AS j
              WHERE j.finished_at IS NOT NULL) AS d
        GROUP BY 1, 2, 3
    $$;

GRANT EXECUTE ON FUNCTION
    public.app_user_sign_in(text),
    public.stop_run(bigint, timestamptz),
    public.metrics_jobs(timestamptz),
    public.metrics_job_durations(double precision[])
TO smuves_app;

-- Only a portal's owner may delete it; members (who see it through portals_app) may not.
CREATE POLICY portals_app_delete_owner ON public.portals AS RESTRICTIVE
    FOR DELETE TO smuves_app
    USING (owner_id = public.current_app_user());
GRANT DELETE ON public.portals TO smuves_app;

-- /healthz: which migrations are applied (the ledger holds no tenant data).
GRANT SELECT (version) ON public.schema_migrations TO smuves_app;
