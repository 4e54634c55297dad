-- A worker writes a portal's rows only while it holds a live lease on a job of that portal.
--
-- Until now the worker role's rows were those of the portal it named in app.portal_id, a
-- setting it makes itself: a compromised or buggy worker process could rewrite any tenant's
-- content, or make any schedule due. Now:
--
-- * A job's transactions name the job and its lease besides the portal (Database.for_job):
--   app.job_id and app.lease_token, set LOCAL with app.portal_id. worker_holds_lease() says
--   whether that lease is live: the job is of the named portal, running under that token (no
--   other claim took it over, nothing failed, stopped or requeued it) and its last heartbeat
--   is younger than its kind's lease (job_leases) by the database's clock. A lease token is
--   handed only to the worker whose claim made it (0015: no runtime role reads it).
-- * Every write of a worker to the tables a job fills (content_items, content_rejects,
--   content_syncs, exports, fetch_reads, fetch_seen) must hold such a lease: a RESTRICTIVE
--   policy per command, ANDed with the portal policies of 0003 and later. content_versions
--   is written by the history triggers of 0014, as the owner, from the content_items writes.
-- * Reads of the portal's documents (content_items, content_versions, and content_rejects,
--   which holds the bytes of what could not be stored) and of a job's record of what it saw
--   (fetch_seen) need the lease too: a worker reads them only to store a page, sweep or
--   export, all under a job. The rest stays readable by the portal alone: runs, jobs,
--   schedules, exports, content_syncs and fetch_reads are what the scheduler (outside any
--   job) and `smuves export` (after its run) read.
-- * The policies call the function as `(SELECT public.worker_holds_lease())`: an uncorrelated
--   sub-select, which Postgres runs once per statement (an InitPlan), not once per row.
-- * The scheduler works outside any job. It still creates runs only for a due schedule (0015)
--   and jobs only through enqueue_job_v2; it no longer updates schedules nor writes
--   notifications itself: advance_due_schedule and disable_due_schedule (SECURITY DEFINER)
--   do, each only for an enabled schedule that is due at the database's time.
--
-- Operator sessions are not affected (the login role bypasses or owns every policy), and
-- neither is smuves_app: the policies are for smuves_worker only.

SET LOCAL ROLE smuves_owner;

-- Whether this transaction holds a live lease on a job of the portal it names (see above).
-- SECURITY DEFINER: the worker may not read jobs.lease_token. STABLE, no argument: a policy
-- wraps it in a sub-select, evaluated once per statement. plpgsql, not sql: a sql function
-- that cannot be inlined (SECURITY DEFINER, SET) plans its query again in every statement
-- that calls it, which cost the page write a tenth of its time or more; plpgsql keeps the plan for
-- the session.
CREATE FUNCTION public.worker_holds_lease() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
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
GRANT EXECUTE ON FUNCTION public.worker_holds_lease() TO smuves_worker;

DO $$
DECLARE
    fence record;
BEGIN
    FOR fence IN
        SELECT * FROM (VALUES
            ('content_items', 'ALL'),
            ('content_versions', 'SELECT'),
            ('fetch_seen', 'ALL'),
            ('content_rejects', 'SELECT'), ('content_rejects', 'INSERT'),
            ('content_syncs', 'INSERT'), ('content_syncs', 'UPDATE'),
            ('exports', 'INSERT'), ('exports', 'UPDATE'),
            ('fetch_reads', 'INSERT'), ('fetch_reads', 'UPDATE')
        ) AS f (tab, cmd)
    LOOP
        EXECUTE pg_catalog.format(
            'CREATE POLICY %I ON public.%I AS RESTRICTIVE FOR %s TO smuves_worker %s',
            fence.tab || '_worker_lease' || CASE fence.cmd WHEN 'ALL' THEN ''
                                                           ELSE '_' || lower(fence.cmd) END,
            fence.tab,
            fence.cmd,
            CASE fence.cmd
                WHEN 'INSERT' THEN 'WITH CHECK ((SELECT public.worker_holds_lease()))'
                WHEN 'SELECT' THEN 'USING ((SELECT public.worker_holds_lease()))'
                ELSE 'USING ((SELECT public.worker_holds_lease()))'
                     ' WITH CHECK ((SELECT public.worker_holds_lease()))'
            END);
    END LOOP;
END
$$;

-- Whether schedule p_schedule is enabled and due at p_now (the functions below pass
-- effective_now: the database's clock, or a made-up time from the operator's login only).
-- Not SECURITY DEFINER, granted to nobody: they run it as the owner.
CREATE FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_schedule.enabled
           AND (p_schedule.next_run_at IS NULL OR p_schedule.next_run_at <= p_now)
    $$;

-- After a due schedule's firing (or a skipped one): its next time, which must be after now,
-- and, when the firing started a run, the time it fired at. False, and nothing changed, when
-- the schedule is not due (or not enabled, or does not exist).
CREATE FUNCTION public.advance_due_schedule(
    p_schedule_id bigint,
    p_next_run_at timestamptz,
    p_last_run_at timestamptz DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
    BEGIN
        IF p_next_run_at IS NULL OR p_next_run_at <= v_now
           OR p_last_run_at > v_now THEN
            RAISE EXCEPTION 'advance_due_schedule: the next time (%) must be after now (%) and '
                            'the last one (%) not after it', p_next_run_at, v_now, p_last_run_at
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        UPDATE public.schedules AS s
        SET next_run_at = p_next_run_at,
            last_run_at = coalesce(p_last_run_at, s.last_run_at)
        WHERE s.id = p_schedule_id AND public.schedule_is_due(s, v_now);
        RETURN FOUND;
    END
    $$;

-- Disable a due schedule that cannot be fired and tell its owner (its portal's owner when
-- it has none) p_message. NULL when the schedule is not due (nothing changed); else whether
-- somebody was told.
CREATE FUNCTION public.disable_due_schedule(
    p_schedule_id bigint,
    p_message text,
    p_now timestamptz DEFAULT NULL
)
    RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        WITH disabled AS (
            UPDATE public.schedules AS s SET enabled = false
            WHERE s.id = p_schedule_id AND public.schedule_is_due(s, public.effective_now(p_now))
            RETURNING s.id, s.portal_id, s.owner_id
        ), told AS (
            INSERT INTO public.notifications (user_id, schedule_id, kind, message)
            SELECT coalesce(d.owner_id, p.owner_id), d.id, 'schedule_disabled', p_message
            FROM disabled AS d JOIN public.portals AS p ON p.id = d.portal_id
            WHERE coalesce(d.owner_id, p.owner_id) IS NOT NULL
            RETURNING 1
        )
        SELECT CASE WHEN EXISTS (SELECT FROM disabled) THEN EXISTS (SELECT FROM told) END
    $$;

GRANT EXECUTE ON FUNCTION
    public.advance_due_schedule(bigint, timestamptz, timestamptz, timestamptz),
    public.disable_due_schedule(bigint, text, timestamptz)
TO smuves_worker;

-- The scheduler's writes go through the two functions above; the worker writes neither
-- schedules nor notifications itself.
REVOKE UPDATE ON public.schedules FROM smuves_worker;
REVOKE INSERT ON public.notifications FROM smuves_worker;
