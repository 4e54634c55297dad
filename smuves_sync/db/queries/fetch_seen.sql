-- fetch_seen and content_syncs (smuves_sync/db/fetch_seen.py): the ids a fetch saw and the
-- deletion sweep over them, the last confirmation of a portal's type.

-- name: content_seen_add
-- The ids a page of fetch job %(job_id)s saw (fetch_seen, 0006), in the page's transaction.
INSERT INTO public.fetch_seen (job_id, portal_id, hubspot_id)
SELECT %(job_id)s, %(portal_id)s, h FROM unnest(%(hubspot_ids)b::text[]) AS h
ON CONFLICT DO NOTHING

-- name: content_seen_forget
-- A listing that starts (again) from the beginning: nothing seen yet.
DELETE FROM public.fetch_seen WHERE job_id = %(job_id)s

-- name: content_seen_mark
-- The marker row of a listing that started (id '': no object has it). Its absence in a
-- resumed job means the ids were lost (Postgres crashed: fetch_seen is unlogged).
INSERT INTO public.fetch_seen (job_id, portal_id, hubspot_id)
VALUES (%(job_id)s, %(portal_id)s, '')
ON CONFLICT DO NOTHING

-- name: content_seen_intact
SELECT EXISTS (SELECT FROM public.fetch_seen
               WHERE job_id = %(job_id)s AND hubspot_id = '') AS intact

-- name: content_seen_count
SELECT count(*) AS n FROM public.fetch_seen WHERE job_id = %(job_id)s AND hubspot_id <> ''

-- name: content_unseen
-- The type's objects stored as present (live or archived, not deleted) that fetch job
-- %(job_id)s has not seen, in id order after %(after)s, %(limit)s at a time: what the
-- deletion sweep asks HubSpot about. A read: nothing is written to find them.
SELECT c.hubspot_id FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL AND c.hubspot_id > %(after)s
  AND NOT EXISTS (SELECT FROM public.fetch_seen AS s
                  WHERE s.job_id = %(job_id)s AND s.hubspot_id = c.hubspot_id)
ORDER BY c.hubspot_id
LIMIT %(limit)s

-- name: content_mark_deleted
-- Objects HubSpot confirmed gone: marked deleted by run %(run_id)s (once; a row already
-- marked is left alone).
UPDATE public.content_items
SET deleted_at = now(), changed_run = %(run_id)s, changed_at = now()
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
  AND hubspot_id = ANY (%(hubspot_ids)b::text[]) AND deleted_at IS NULL

-- name: content_sync_confirm
-- The completed fetch of a portal's type: its one row of content_syncs.
INSERT INTO public.content_syncs AS s
    (portal_id, content_type, run_id, job_id, confirmed_at, seen, deleted)
VALUES (%(portal_id)s, %(content_type)s, %(run_id)s, %(job_id)s, now(), %(seen)s, %(deleted)s)
ON CONFLICT (portal_id, content_type) DO UPDATE
SET run_id = excluded.run_id, job_id = excluded.job_id, confirmed_at = excluded.confirmed_at,
    seen = excluded.seen, deleted = excluded.deleted

-- name: content_sync_get
SELECT portal_id, content_type::text AS content_type, run_id, job_id, confirmed_at, seen, deleted
FROM public.content_syncs WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s

