-- The operators' dashboard's metrics.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- Finished jobs by kind, status and duration bucket (created to finished, queue wait
-- included). bucket = how many of p_bounds (ascending) are below the duration, so bucket i
-- holds the durations in (p_bounds[i], p_bounds[i+1]]: Prometheus' `le` buckets.
CREATE OR REPLACE FUNCTION public.metrics_job_durations(p_bounds double precision[]) RETURNS TABLE(kind text, status text, bucket integer, jobs bigint, seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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
REVOKE ALL ON FUNCTION public.metrics_job_durations(p_bounds double precision[]) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.metrics_job_durations(p_bounds double precision[]) TO smuves_app;

-- Jobs by kind and status, and for each kind the age of its oldest due pending job (a job
-- waiting for a later run_after, after a backoff or a parked rate limit, is not late).
CREATE OR REPLACE FUNCTION public.metrics_jobs(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(kind text, status text, jobs bigint, oldest_pending_seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT j.kind::text, j.status::text, count(*),
               extract(epoch FROM coalesce(p_now, now())
                                  - min(j.run_after) FILTER (
                                        WHERE j.status = 'pending'
                                          AND j.run_after <= coalesce(p_now, now())))::float8
        FROM public.jobs AS j
        GROUP BY j.kind, j.status
    $$;
REVOKE ALL ON FUNCTION public.metrics_jobs(p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.metrics_jobs(p_now timestamp with time zone) TO smuves_app;

-- How many workers are alive at p_now (only the operator's login may pass a time).
CREATE OR REPLACE FUNCTION public.metrics_workers_live(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT count(*) FROM public.workers AS w
        WHERE public.worker_alive(w.last_seen_at, w.heartbeat_every, public.effective_now(p_now))
    $$;
REVOKE ALL ON FUNCTION public.metrics_workers_live(p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.metrics_workers_live(p_now timestamp with time zone) TO smuves_app;
