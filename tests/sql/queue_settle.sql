-- What the completions of a run's jobs call on their way (tests/integration/test_queue_settle.py),
-- counted by the server for the transaction (pg_stat_xact_user_functions).

-- name: settle_count_calls
SET LOCAL track_functions = 'all'

-- name: settle_claim_one
SELECT id, lease_token FROM public.claim_jobs('w1', ARRAY['fetch'], 1, %(now)s)

-- name: settle_complete
SELECT id FROM public.complete_jobs(%(job_ids)s::bigint[], %(lease_tokens)s::uuid[], NULL,
                                       %(now)s)

-- name: settle_calls
-- How often each of the settling's functions ran in this transaction (0: never).
SELECT f.name, coalesce(s.calls, 0) AS calls
FROM unnest(ARRAY['settle_locked_runs', 'notify_settled_runs', 'notify_run_owners',
                  'run_failures_note', 'run_rejects_note']) AS f (name)
LEFT JOIN pg_stat_xact_user_functions AS s ON s.schemaname = 'public' AND s.funcname = f.name
ORDER BY f.name

-- name: settle_run_notices
SELECT r.status, count(n.id) AS notices
FROM public.runs AS r LEFT JOIN public.notifications AS n ON n.run_id = r.id
WHERE r.id = %(run_id)s
GROUP BY r.status

-- name: settle_claim_two
SELECT id, lease_token FROM public.claim_jobs('w1', ARRAY['fetch'], 2, %(now)s)

-- name: settle_complete_leaving_runs
-- complete-and-claim's completion (job_complete_many): its runs are left to the claim after it
SELECT id FROM public.complete_jobs(%(job_ids)s::bigint[], %(lease_tokens)s::uuid[], NULL,
                                       %(now)s, false)

-- name: settle_claim_settling
-- complete-and-claim's claim (job_claim_after_completion), settling the runs %(run_ids)s
SELECT id FROM public.claim_jobs(%(worker)s, ARRAY['fetch'], 1, %(now)s, NULL, 5,
                                 %(run_ids)s::bigint[])

-- name: settle_backend_pid
SELECT pg_backend_pid() AS pid

-- name: settle_backend_waits
-- whether the backend `pid` waits for a lock another transaction holds
SELECT count(*) > 0 AS waits FROM pg_catalog.pg_locks WHERE pid = %(pid)s AND NOT granted
