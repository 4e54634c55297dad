-- Statements the API tests use to look behind the API (run as the login role).

-- name: check_session_user
SELECT pg_catalog.current_setting('app.user_id', true) AS user_id

-- name: check_app_user
SELECT id, email FROM public.app_users WHERE id = %(user_id)s

-- name: check_portal_token
SELECT token_encrypted FROM public.portals WHERE id = %(portal_id)s

-- name: check_portal_rows
SELECT (SELECT count(*) FROM public.portals WHERE id = %(portal_id)s) AS portals,
       (SELECT count(*) FROM public.runs WHERE portal_id = %(portal_id)s) AS runs,
       (SELECT count(*) FROM public.jobs WHERE portal_id = %(portal_id)s) AS jobs,
       (SELECT count(*) FROM public.content_items WHERE portal_id = %(portal_id)s) AS content

-- name: check_runs_of_portal
SELECT count(*) AS runs FROM public.runs WHERE portal_id = %(portal_id)s

-- name: check_jobs_of_run
SELECT id, status, finished_at FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: plant_export_file
-- A completed export; its file is the test's to write at the export's place.
UPDATE public.exports
SET status = 'completed', row_count = %(row_count)s, bytes = %(bytes)s, finished_at = now()
WHERE id = %(export_id)s

-- name: plant_content_deleted
UPDATE public.content_items SET deleted_at = now()
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s

-- name: plant_run_status
UPDATE public.runs SET status = %(status)s, finished_at = now() WHERE id = %(run_id)s

-- name: plant_jobs_status
UPDATE public.jobs SET status = %(status)s, finished_at = now() WHERE run_id = %(run_id)s

-- name: plant_job_finished_at
UPDATE public.jobs SET created_at = %(created_at)s, finished_at = %(finished_at)s,
                       status = %(status)s
WHERE id = %(job_id)s

-- name: check_portal_hands
-- A portal as stored: name, owner, time zone, and its members by email.
SELECT p.name, p.owner_id, p.time_zone,
       array(SELECT u.email || ':' || m.role FROM public.portal_members AS m
             JOIN public.app_users AS u ON u.id = m.user_id
             WHERE m.portal_id = p.id ORDER BY u.email) AS members
FROM public.portals AS p WHERE p.id = %(portal_id)s

-- name: check_notifications_of_user
SELECT id, run_id FROM public.notifications WHERE user_id = %(user_id)s ORDER BY id

-- name: check_jobs_of_run_errors
SELECT id, last_error, last_error_public FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: as_user_replace_token
-- What a member who is not the owner might try behind the API's back.
WITH who AS (SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true))
UPDATE public.portals SET token_encrypted = 'a token of my choosing', name = 'mine'
WHERE id = %(portal_id)s AND (SELECT true FROM who)
RETURNING id

-- name: roles_stop_run
SELECT id, status FROM public.stop_run(%(run_id)s)
