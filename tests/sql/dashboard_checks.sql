-- Plans the dashboard's tests look at (tests/integration/dashboard/test_data.py). Run inside
-- a transaction with sequential scans off, so that any usable index is used.

-- name: check_plans_off_seqscan
SET LOCAL enable_seqscan = off

-- name: check_plan_completed_by_status_only
-- The shape of complete_jobs' look-up of its batch's runs.
EXPLAIN (COSTS OFF) SELECT DISTINCT j.run_id FROM public.jobs AS j
WHERE j.id = ANY ('{1,2,3}'::bigint[]) AND j.status = 'completed'

-- name: check_plan_completed_status_only_scan
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.jobs AS j WHERE j.status = 'completed'

-- name: check_plan_completed_last_hour
EXPLAIN (COSTS OFF) SELECT count(*) FROM public.jobs AS j
WHERE j.status = 'completed' AND j.finished_at > now() - interval '1 hour'

-- name: age_dashboard_confirmations
-- Every confirmation the dashboard issued, as if its minutes had passed.
UPDATE public.dashboard_confirmations SET expires_at = now() - interval '1 second'

-- name: count_dashboard_confirmations
SELECT count(*) AS n FROM public.dashboard_confirmations
