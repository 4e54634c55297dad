-- Reads the tests use to check outcomes as the login role.

-- name: job_failed_notifications_of_run
-- Only the queue's own kind: other parts add notifications of their own (a run settling).
SELECT user_id, kind, message, created_at FROM public.notifications
WHERE run_id = %(run_id)s AND kind = 'job_failed' ORDER BY id

-- name: job_statuses
SELECT status, count(*) AS n FROM public.jobs GROUP BY status ORDER BY status

-- name: run_statuses
SELECT status, count(*) AS n FROM public.runs GROUP BY status ORDER BY status

-- name: terminate_listeners
SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity
WHERE datname = current_database() AND query = 'LISTEN smuves_jobs'
  AND pid <> pg_catalog.pg_backend_pid()
