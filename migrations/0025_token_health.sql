-- A portal whose token HubSpot refuses (401) is marked, and nothing more is asked of HubSpot
-- for it until it is reconnected with a new token (README "Fetching a portal").
--
-- * portals.token_rejected_at: when HubSpot first refused the stored token; NULL while it is
--   not known to be refused. A reconnect (portal_store, portal_reconnect) stores a new token
--   and clears it; a key rotation re-encrypts the same token and leaves it as it is.
-- * fail_run_token_refused: a worker's job got a 401, or found the mark before asking. Under
--   the live lease of that job only, the portal is marked and every open job of the job's run
--   fails at once with the reason (a running job of another worker loses its lease), so the
--   run sends no more requests; the run is settled.
-- * mark_portal_token_refused: the orchestrator's counting at the start got a 401. The
--   operator's login may mark any portal, the API only one its user is a member of.
-- * portal_token: the lease holder also reads the mark, so a job of a marked portal fails
--   without a request.
-- Same conventions as the queue's functions: owned by smuves_owner, search_path pinned,
-- every table qualified; EXECUTE is revoked from PUBLIC by the default privileges.

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.portals ADD COLUMN token_rejected_at timestamptz;

GRANT SELECT (token_rejected_at) ON public.portals TO smuves_app, smuves_worker;
-- A reconnect by the portal's owner clears the mark with the new token (portal_reconnect).
GRANT UPDATE (token_rejected_at) ON public.portals TO smuves_app;

-- Fail every open job of the run of job p_job_id with p_error (operators) and p_error_public
-- (the run's owner), and mark the job's portal, while the caller holds that job's live lease.
-- Jobs are locked in id order before the run, as run_to_stopped does. Returns the jobs
-- failed; no row: the lease is not the caller's (any more).
CREATE FUNCTION public.fail_run_token_refused(
    p_job_id bigint,
    p_lease_token uuid,
    p_error text,
    p_error_public text,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_job public.jobs;
        v_failed public.jobs[];
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j WHERE j.id = p_job_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        PERFORM FROM public.jobs AS j
        WHERE j.run_id = v_job.run_id AND j.status IN ('pending', 'running')
        ORDER BY j.id
        FOR UPDATE;
        IF NOT EXISTS (SELECT FROM public.jobs AS j
                       WHERE j.id = p_job_id AND j.lease_token = p_lease_token
                         AND j.status = 'running') THEN
            RETURN;
        END IF;

        WITH failed AS (
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = left(p_error, 2000),
                last_error_public = left(p_error_public, 2000)
            WHERE j.run_id = v_job.run_id AND j.status IN ('pending', 'running')
            RETURNING j.*
        )
        SELECT array_agg(f ORDER BY f.id) INTO v_failed FROM failed AS f;

        UPDATE public.portals AS p
        SET token_rejected_at = coalesce(p.token_rejected_at, v_now)
        WHERE p.id = v_job.portal_id;

        PERFORM public.notify_run_owners(ARRAY(
            SELECT ROW(f.run_id, 'job_failed',
                       pg_catalog.format('The %s of %s for portal %s failed: %s',
                                         f.kind, f.content_type, f.portal_id,
                                         left(p_error_public, 500)),
                       v_now)::public.run_notice
            FROM unnest(v_failed) AS f
            ORDER BY f.id));

        PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
        RETURN QUERY SELECT * FROM unnest(v_failed);
    END
    $$;

-- Mark portal p_portal_id's token as refused, for the operator's login or a member of the
-- portal (the rule of portal_token_for_member). True when the caller may, whether or not it
-- was marked already.
CREATE FUNCTION public.mark_portal_token_refused(p_portal_id bigint)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        -- The definer sees every row: the caller's right is checked here.
        UPDATE public.portals AS p
        SET token_rejected_at = coalesce(p.token_rejected_at, pg_catalog.now())
        WHERE p.id = p_portal_id
          AND (public.operator_session()
               OR p.id IN (SELECT public.member_portal_ids())
               OR p.owner_id = public.current_app_user());
        RETURN FOUND;
    END
    $$;

-- portal_token of the queue, with the mark.
DROP FUNCTION public.portal_token(bigint, uuid);
CREATE FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid)
    RETURNS TABLE (portal_id bigint, token_encrypted bytea, time_zone text,
                   token_rejected_at timestamptz)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT p.id, p.token_encrypted, p.time_zone, p.token_rejected_at
        FROM public.jobs AS j JOIN public.portals AS p ON p.id = j.portal_id
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
    $$;

GRANT EXECUTE ON FUNCTION
    public.portal_token(bigint, uuid),
    public.fail_run_token_refused(bigint, uuid, text, text, timestamptz)
TO smuves_worker;
GRANT EXECUTE ON FUNCTION public.mark_portal_token_refused(bigint) TO smuves_app;
