-- scripts/bench_queue_costs.py: each of the queue's guarantees taken out of a scratch database
-- (by the benchmark's login after the migration, never by a migration), so that a drain beside the whole
-- queue says what the part costs. Each replaces the product's function of the same
-- signature with one that does nothing, or drops the trigger; the script checks that no
-- overload appeared instead (a signature changed here but not there).

-- name: cost_cut_notice
-- settled runs tell nobody
CREATE OR REPLACE FUNCTION public.notify_settled_runs(p_runs public.runs[]) RETURNS void
    LANGUAGE plpgsql
    AS $$ BEGIN END $$

-- name: cost_cut_settle
-- runs are never settled by the queue's functions: no probe, no count, no notice
CREATE OR REPLACE FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql
    AS $$ BEGIN RETURN; END $$

-- name: cost_cut_cap
-- every fetch job is within its portal's cap
CREATE OR REPLACE FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) RETURNS SETOF boolean
    LANGUAGE sql STABLE
    AS $$ SELECT true $$

-- name: cost_cut_trigger
-- a finished fetch job's sightings are left where they are
DROP TRIGGER jobs_fetch_seen_forget_finished ON public.jobs

-- name: cost_cut_owner_key
-- a notice's row is not checked against its user's: no FOR KEY SHARE of the owner's row, which
-- every worker settling a run of that owner takes at once
ALTER TABLE public.notifications DROP CONSTRAINT notifications_user_id_fkey

-- name: cost_function_versions
-- how many functions of each name the cuts replace: one each, or a cut made an overload
SELECT p.proname::text, count(*)
FROM pg_catalog.pg_proc AS p
WHERE p.pronamespace = 'public'::regnamespace
  AND p.proname IN ('notify_settled_runs', 'settle_locked_runs', 'job_within_portal_cap')
GROUP BY p.proname
