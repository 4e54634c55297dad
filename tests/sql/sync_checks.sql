-- Reads the fetch, export and orchestrator tests use to check outcomes (login role).

-- name: sync_runs_of_portal
SELECT id, kind, status FROM public.runs WHERE portal_id = %(portal_id)s ORDER BY id

-- name: sync_jobs_of_portal
SELECT id, run_id, kind, content_type::text AS content_type, status, attempts, total,
       processed, last_error
FROM public.jobs WHERE portal_id = %(portal_id)s ORDER BY id

-- name: sync_notifications_of_portal
SELECT n.user_id, n.run_id, n.kind, n.message FROM public.notifications AS n
JOIN public.runs AS r ON r.id = n.run_id
WHERE r.portal_id = %(portal_id)s ORDER BY n.id

-- name: sync_content_of_portal
SELECT content_type::text AS content_type, hubspot_id, hubspot_updated_at, archived,
       deleted_at, first_seen_run, changed_run, content_hash, name, data, xmin::text AS xmin
FROM public.content_items WHERE portal_id = %(portal_id)s
ORDER BY content_type, hubspot_id

-- name: sync_exports_of_portal
SELECT id, run_id, content_type::text AS content_type, format, status, path, row_count, bytes,
       include_deleted, deleted_count
FROM public.exports WHERE portal_id = %(portal_id)s ORDER BY id

-- name: sync_rejects_of_portal
SELECT run_id, content_type::text AS content_type, hubspot_id, reason, raw, raw_size
FROM public.content_rejects WHERE portal_id = %(portal_id)s ORDER BY content_type, id

-- name: sync_portal_row
SELECT id, name, owner_id, token_encrypted FROM public.portals WHERE id = %(portal_id)s

-- name: sync_members_of_portal
SELECT u.email, m.role FROM public.portal_members AS m
JOIN public.app_users AS u ON u.id = m.user_id
WHERE m.portal_id = %(portal_id)s ORDER BY u.email

-- name: sync_notifications_of_run
SELECT user_id, kind, message FROM public.notifications WHERE run_id = %(run_id)s ORDER BY id

-- name: sync_rename_content
UPDATE public.content_items SET name = %(new_name)s
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s

-- name: sync_content_names
SELECT hubspot_id, name, archived FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s ORDER BY hubspot_id

-- name: sync_steal_lease
-- What another worker's takeover looks like to the first: a new lease token.
UPDATE public.jobs SET lease_token = gen_random_uuid() WHERE id = %(job_id)s

-- name: sync_terminate_backends
-- Every other session of this database dies, as in a database restart.
SELECT count(pg_catalog.pg_terminate_backend(pid)) AS n FROM pg_catalog.pg_stat_activity
WHERE datname = current_database() AND pid <> pg_catalog.pg_backend_pid()

-- name: sync_seen_of_job
SELECT hubspot_id FROM public.fetch_seen WHERE job_id = %(job_id)s ORDER BY hubspot_id

-- name: sync_job_status
-- A job's status set by hand (what the queue functions do, without their checks).
UPDATE public.jobs
SET status = %(status)s::text,
    lease_token = CASE WHEN %(status)s::text = 'running' THEN gen_random_uuid() END,
    locked_at = CASE WHEN %(status)s::text = 'running' THEN now() END,
    heartbeat_at = CASE WHEN %(status)s::text = 'running' THEN now() END
WHERE id = %(job_id)s

-- name: sync_delete_job
DELETE FROM public.jobs WHERE id = %(job_id)s

-- name: cli_portal_time_zone
SELECT time_zone FROM public.portals WHERE id = %(portal_id)s

-- name: rotate_stored_tokens
SELECT id, token_encrypted FROM public.portals WHERE token_encrypted IS NOT NULL ORDER BY id

-- name: sync_reads_of_portal
-- How each fetch job of the portal read its type (fetch_reads), oldest first.
SELECT f.job_id, f.run_id, f.content_type::text AS content_type, f.mode, f.reason, f.since,
       f.requests, f.changed, f.deleted, f.unchanged, f.archived_pass_requests,
       f.count_window_requests, f.full_read_requests, f.listing_started_at
FROM public.fetch_reads AS f WHERE f.portal_id = %(portal_id)s ORDER BY f.job_id

-- name: sync_age_last_full_read
-- The portal's types were last read in full %(days)s days ago (the automatic full read).
UPDATE public.content_syncs
SET last_full_listing_at = last_full_listing_at - make_interval(days => %(days)s)
WHERE portal_id = %(portal_id)s

-- name: sync_lock_jobs_of_run
-- A run's jobs locked until the test's transaction ends: a worker's writes to them wait.
SELECT id FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id FOR UPDATE
