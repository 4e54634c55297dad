-- Reads the operator and schedule tests use to check outcomes as the login role.

-- name: opscheck_runs_of_portal
SELECT id, owner_id, kind, status, content_types::text[] AS content_types
FROM public.runs WHERE portal_id = %(portal_id)s ORDER BY id

-- name: opscheck_run_count
SELECT count(*) AS n FROM public.runs

-- name: opscheck_schedules
SELECT id, portal_id, cron_expression, content_types::text[] AS content_types, enabled,
       next_run_at, last_run_at
FROM public.schedules ORDER BY id

-- name: opscheck_schedule_notifications
SELECT user_id, run_id, kind, message FROM public.notifications
WHERE kind = 'schedule_disabled' ORDER BY id

-- name: opscheck_job
SELECT * FROM public.jobs WHERE id = %(job_id)s

-- name: opscheck_run
SELECT id, status, started_at, finished_at FROM public.runs WHERE id = %(run_id)s

-- name: opscheck_table_counts
SELECT (SELECT count(*) FROM public.runs) AS runs,
       (SELECT count(*) FROM public.jobs) AS jobs,
       (SELECT count(*) FROM public.exports) AS exports,
       (SELECT count(*) FROM public.notifications) AS notifications

-- name: opscheck_ids
SELECT 'run' AS what, id FROM public.runs
UNION ALL SELECT 'job', id FROM public.jobs
UNION ALL SELECT 'export', id FROM public.exports
UNION ALL SELECT 'notification', id FROM public.notifications
ORDER BY 1, 2

-- name: opscheck_db_now
SELECT now() AS now

-- name: opsplant_notification
INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
VALUES (%(user_id)s, %(run_id)s, 'run_completed', 'planted', %(created_at)s)
RETURNING id
