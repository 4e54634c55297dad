-- The HTTP API's reads and writes (smuves_sync/db/api.py). Every statement runs as smuves_app
-- inside `Database.as_user`: row-level security limits it to the caller's portals, so a
-- statement naming another user's row finds nothing.

-- name: api_user_sign_in
SELECT public.app_user_sign_in(%(email)s) AS id

-- name: api_portal_list
-- The caller's portals, with the caller's role in each.
SELECT p.id, p.name, p.owner_id, p.created_at,
       coalesce(m.role::text, 'owner') AS role
FROM public.portals AS p
LEFT JOIN public.portal_members AS m
       ON m.portal_id = p.id AND m.user_id = public.current_app_user()
ORDER BY p.id

-- name: api_portal_get
SELECT p.id, p.name, p.owner_id, p.created_at,
       coalesce(m.role::text, 'owner') AS role
FROM public.portals AS p
LEFT JOIN public.portal_members AS m
       ON m.portal_id = p.id AND m.user_id = public.current_app_user()
WHERE p.id = %(portal_id)s

-- name: api_portal_insert
-- No row back when the id is taken (by anyone: HubSpot portal ids are global). The insert
-- trigger makes the owner a member.
INSERT INTO public.portals (id, name, owner_id, token_encrypted)
VALUES (%(portal_id)s, %(name)s, public.current_app_user(), %(token_encrypted)s)
ON CONFLICT (id) DO NOTHING
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: api_portal_reconnect
-- A new name and token for a portal the caller owns; no row back otherwise.
UPDATE public.portals
SET name = %(name)s, token_encrypted = %(token_encrypted)s
WHERE id = %(portal_id)s AND owner_id = public.current_app_user()
RETURNING id, name, owner_id, created_at, 'owner' AS role

-- name: api_portal_delete
-- Only the owner's delete passes the portals_app_delete_owner policy (migrations/0008).
DELETE FROM public.portals WHERE id = %(portal_id)s RETURNING id

-- name: api_run_detail
-- The run and its jobs in one statement, so in one snapshot: a worker finishing the last job
-- between two reads cannot show a finished job under a run still running. One row per job
-- (run columns prefixed run_), or one row with NULL job columns for a run without jobs.
SELECT r.id AS run_id_, r.portal_id AS run_portal_id, r.owner_id AS run_owner_id,
       r.kind AS run_kind, r.status AS run_status,
       r.content_types::text[] AS run_content_types, r.created_at AS run_created_at,
       r.started_at AS run_started_at, r.finished_at AS run_finished_at, j.*
FROM public.runs AS r
LEFT JOIN public.jobs AS j ON j.run_id = r.id
WHERE r.id = %(run_id)s
ORDER BY j.id

-- name: api_run_stop
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.stop_run(%(run_id)s, %(now)s)

-- name: api_export_get
SELECT * FROM public.exports WHERE id = %(export_id)s

-- name: api_content_page
-- Keyset page in primary-key order (content_type, hubspot_id) after the given key; live
-- objects only. %(pattern)s is an ILIKE pattern whose backslashes, percent signs and
-- underscores from the user are already escaped. One row more than the page is asked for,
-- to know whether another page follows.
SELECT c.content_type::text AS content_type, c.hubspot_id, c.name, c.slug, c.url, c.state,
       c.language, c.translated_from_id, c.hubspot_updated_at, c.archived, c.synced_at, c.data
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s
  AND c.deleted_at IS NULL
  AND (%(content_type)s::text IS NULL OR c.content_type = %(content_type)s::text)
  AND (%(pattern)s::text IS NULL
       OR c.name ILIKE %(pattern)s::text
       OR c.slug ILIKE %(pattern)s::text
       OR c.url ILIKE %(pattern)s::text)
  AND (%(after_type)s::text IS NULL
       OR (c.content_type::text, c.hubspot_id) > (%(after_type)s::text, %(after_id)s::text))
ORDER BY c.content_type, c.hubspot_id
LIMIT %(limit)s + 1

-- name: api_notification_list
-- Newest first; keyset on id (older than %(before)s).
SELECT id, run_id, kind, message, created_at, read_at
FROM public.notifications
WHERE user_id = public.current_app_user()
  AND (%(before)s::bigint IS NULL OR id < %(before)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s + 1

-- name: api_notification_read
-- The first read time is kept: marking twice changes nothing.
UPDATE public.notifications
SET read_at = coalesce(read_at, now())
WHERE id = %(notification_id)s
RETURNING id, run_id, kind, message, created_at, read_at

-- name: api_migration_versions
SELECT version FROM public.schema_migrations ORDER BY version

-- name: api_metrics_jobs
SELECT kind, status, jobs, oldest_pending_seconds FROM public.metrics_jobs(%(now)s)

-- name: api_metrics_job_durations
SELECT kind, status, bucket, jobs, seconds
FROM public.metrics_job_durations(%(bounds)s::float8[])

-- name: api_content_language_groups
-- The live members of the language groups of the live objects asked for (parallel arrays
-- of types and ids), each object itself included, with the key it was asked for. A group is
-- its primary (translated_from_id NULL) and every object translated from it, so an asked
-- object's group is found from its root: its translated_from_id, or its own id. Members come
-- primary first, then by language; `data` only of the asked objects, when %(with_data)s.
WITH asked AS (
    SELECT c.content_type, c.hubspot_id, coalesce(c.translated_from_id, c.hubspot_id) AS root
    FROM unnest(%(content_types)s::text[], %(hubspot_ids)s::text[])
         AS a (content_type, hubspot_id)
    JOIN public.content_items AS c
      ON c.portal_id = %(portal_id)s AND c.content_type = a.content_type
     AND c.hubspot_id = a.hubspot_id AND c.deleted_at IS NULL
)
SELECT a.content_type::text AS asked_type, a.hubspot_id AS asked_id,
       m.content_type::text AS content_type, m.hubspot_id, m.name, m.slug, m.url, m.state,
       m.language, m.translated_from_id, m.hubspot_updated_at, m.archived, m.synced_at,
       CASE WHEN %(with_data)s AND m.hubspot_id = a.hubspot_id THEN m.data END AS data
FROM asked AS a
JOIN public.content_items AS m
  ON m.portal_id = %(portal_id)s AND m.content_type = a.content_type
 AND (m.hubspot_id = a.root OR m.translated_from_id = a.root)
 AND m.deleted_at IS NULL
ORDER BY a.content_type, a.hubspot_id, m.translated_from_id NULLS FIRST, m.language,
         m.hubspot_id
