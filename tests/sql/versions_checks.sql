-- Reads and plants of the content history tests (test_content_versions.py, test_history_cli.py,
-- api/test_history.py). They run as the login role unless a test says otherwise.

-- name: versions_rows
SELECT hubspot_id, version, event::text AS event, hash, document, seen_from_run,
       seen_until_run, recorded_at, superseded_at
FROM public.content_versions
WHERE portal_id = %(portal_id)s
ORDER BY content_type, hubspot_id, version

-- name: versions_count
-- What content_versions holds of the portal (the first versions kept in rows are not in it).
SELECT count(*) AS n,
       count(*) FILTER (WHERE document IS NOT NULL) AS documents
FROM public.content_versions WHERE portal_id = %(portal_id)s

-- name: versions_mark_deleted
-- What a deletion sweep does to an object gone from HubSpot, however it is written.
UPDATE public.content_items SET deleted_at = now()
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
  AND hubspot_id = ANY (%(hubspot_ids)s::text[]) AND deleted_at IS NULL

-- name: versions_remove_item
DELETE FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
  AND hubspot_id = %(hubspot_id)s

-- name: versions_touch_item
-- A statement that rewrites a row without changing what history records.
UPDATE public.content_items SET name = name || '', data = data
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s

-- name: versions_finish_job
UPDATE public.jobs SET status = 'completed', finished_at = now() WHERE id = %(job_id)s

-- name: versions_forget
-- History lost behind the triggers' back (restored from a dump without it): what
-- content_versions held of the object.
DELETE FROM public.content_versions
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s

-- name: versions_age
-- Move a portal's history back in time by %(by)s, as if it had been recorded then: the
-- versions of content_versions and the first versions kept in their rows.
WITH rows AS (
    UPDATE public.content_items
    SET first_version_at = first_version_at - %(by)s::interval
    WHERE portal_id = %(portal_id)s
      AND (%(hubspot_id)s::text IS NULL OR hubspot_id = %(hubspot_id)s)
)
UPDATE public.content_versions
SET recorded_at = recorded_at - %(by)s::interval,
    superseded_at = superseded_at - %(by)s::interval
WHERE portal_id = %(portal_id)s AND (%(hubspot_id)s::text IS NULL OR hubspot_id = %(hubspot_id)s)

-- name: versions_delete_portal
DELETE FROM public.portals WHERE id = %(portal_id)s

-- name: versions_insert_as_worker
INSERT INTO public.content_versions (portal_id, content_type, hubspot_id, version, event, hash)
VALUES (%(portal_id)s, 'site_page', 'forged', 1, 'created', 'x')

-- name: versions_age_deletion
-- Date an object's deletion %(by)s back, as if HubSpot had lost it then.
UPDATE public.content_items SET deleted_at = deleted_at - %(by)s::interval
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s AND deleted_at IS NOT NULL

-- name: versions_objects
SELECT hubspot_id, deleted_at IS NOT NULL AS deleted FROM public.content_items
WHERE portal_id = %(portal_id)s ORDER BY hubspot_id

-- name: versions_forge_insert
-- A worker that inserts a row and names its history: another number, another run.
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, data, content_hash,
                                  version, first_version_run)
VALUES (%(portal_id)s, 'blog_post', 'forged', '{}', 'h', 7, %(run_id)s)

-- name: versions_forge_number
UPDATE public.content_items SET version = 9
WHERE portal_id = %(portal_id)s AND hubspot_id = 'forged'

-- name: versions_forge_key
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, data, content_hash,
                                  first_version_id, first_version_at)
VALUES (%(portal_id)s, 'blog_post', 'backdated', '{}', 'h', 1, now() - interval '1 year')
