-- What a worker may not choose, and what a run counts once:
-- * record_hubspot_minute takes its time from the database, as the queue's functions do
--   (effective_now, 0003): a worker login that passes p_now is refused. Counters dated by the
--   worker would forge the dashboard's history, and dated a week ahead would make the next
--   call forget every real minute.
-- * runs: a worker login creates a run only for a due schedule of the run's portal, owned
--   like the schedule and asking for no type the schedule does not, and only the columns a
--   new run is made of (no status, times or id of its choosing). The orchestrator acting for
--   the operator (operator_session) or the API is not affected.
-- * jobs.lease_token is read by no runtime role. A lease token is what portal_token asks for,
--   and a worker could read the token of any running job of a portal it names in
--   app.portal_id, then that portal's HubSpot token, while another worker held the lease. The
--   queue functions still hand the claimer its lease (they run as the owner). A column added to
--   jobs later is granted to the runtime roles by name.
-- * content_rejects: an object without a usable id is recorded once per run too. 0012 could
--   not tell such objects apart and recorded one again each time its page was read (a second
--   pass of the listing, a requeue from the start), so "N objects could not be stored" counted
--   it twice. Its bytes tell it apart: the same type, size and bytes in one run are the same
--   object (two objects HubSpot sent byte for byte alike are counted once).

SET LOCAL ROLE smuves_owner;

DELETE FROM public.content_rejects AS r
USING public.content_rejects AS earlier
WHERE r.hubspot_id IS NULL AND earlier.hubspot_id IS NULL
  AND earlier.run_id = r.run_id AND earlier.content_type = r.content_type
  AND earlier.raw_size = r.raw_size AND earlier.raw = r.raw
  AND earlier.id < r.id;

CREATE UNIQUE INDEX content_rejects_once_per_run_without_id ON public.content_rejects
    (run_id, content_type, raw_size, pg_catalog.md5(raw)) WHERE hubspot_id IS NULL;

CREATE OR REPLACE FUNCTION public.record_hubspot_minute(
    p_requests bigint,
    p_rate_limited bigint,
    p_now timestamptz DEFAULT NULL
)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_minute timestamptz := date_trunc('minute', public.effective_now(p_now));
    BEGIN
        IF p_requests IS NULL OR p_rate_limited IS NULL OR p_requests < 0
           OR p_rate_limited < 0 THEN
            RAISE EXCEPTION 'record_hubspot_minute: counts must be >= 0, got % and %',
                p_requests, p_rate_limited
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        INSERT INTO public.hubspot_minutes AS m (minute, requests, rate_limited)
        VALUES (v_minute, p_requests, p_rate_limited)
        ON CONFLICT (minute) DO UPDATE
        SET requests = m.requests + excluded.requests,
            rate_limited = m.rate_limited + excluded.rate_limited;
        DELETE FROM public.hubspot_minutes AS m WHERE m.minute < v_minute - interval '7 days';
    END
    $$;

-- Whether a worker login may create this run: the scheduler's, for a due schedule. Runs with
-- its caller's rights: the schedules it looks at are those of the worker's portal.
CREATE FUNCTION public.worker_may_create_run(
    p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]
)
    RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
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
REVOKE EXECUTE ON FUNCTION public.worker_may_create_run(bigint, uuid, public.job_kind, text[])
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.worker_may_create_run(bigint, uuid, public.job_kind, text[]),
    public.operator_session()
TO smuves_worker;

CREATE POLICY runs_worker_create_scheduled ON public.runs AS RESTRICTIVE FOR INSERT
    TO smuves_worker
    WITH CHECK (public.worker_may_create_run(portal_id, owner_id, kind, content_types::text[]));

REVOKE INSERT ON public.runs FROM smuves_worker;
GRANT INSERT (portal_id, owner_id, kind, content_types) ON public.runs TO smuves_worker;

REVOKE SELECT ON public.jobs FROM smuves_app, smuves_worker;
GRANT SELECT (id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, run_after,
       locked_at, locked_by, heartbeat_at, total, processed, cursor, last_error,
       last_error_public, idempotency_key, created_at, finished_at)
ON public.jobs TO smuves_app, smuves_worker;
