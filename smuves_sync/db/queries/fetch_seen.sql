-- fetch_seen and content_syncs (smuves_sync/db/fetch_seen.py): the ids a fetch saw and the
-- deletion sweep over them, the last confirmation of a portal's type.

-- name: content_seen_add
-- The ids a page of fetch job %(job_id)s saw (fetch_seen), in the page's transaction.
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
-- deletion sweep asks HubSpot about. A read: nothing is written to find them. With
-- %(archived)s (not NULL), only the objects stored archived (true) or live (false): an
-- incremental fetch that listed the ids of one pass sweeps what was stored from that pass;
-- with %(prefix)s, only ids that start with it (the rows of one HubDB table: '<table>:').
SELECT c.hubspot_id FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL AND c.hubspot_id > %(after)s
  AND (%(archived)s::boolean IS NULL OR c.archived = %(archived)s::boolean)
  AND (%(prefix)s::text IS NULL OR starts_with(c.hubspot_id, %(prefix)s::text))
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
-- The completed fetch of a portal's type: its one row of content_syncs, with how the job read
-- it and when its listing began (fetch_reads; a job without that row read in full, from
-- an unknown moment: the next fetch then reads in full too).
INSERT INTO public.content_syncs AS s
    (portal_id, content_type, run_id, job_id, confirmed_at, seen, deleted, mode,
     listing_started_at, last_full_listing_at, last_incremental_listing_at)
SELECT %(portal_id)s, %(content_type)s, %(run_id)s, %(job_id)s, now(), %(seen)s, %(deleted)s,
       coalesce(r.mode, 'full'), r.listing_started_at,
       CASE WHEN r.mode = 'full' THEN r.listing_started_at END,
       CASE WHEN r.mode = 'incremental' THEN r.listing_started_at END
FROM (SELECT 1) AS one
LEFT JOIN public.fetch_reads AS r ON r.job_id = %(job_id)s
ON CONFLICT (portal_id, content_type) DO UPDATE
SET run_id = excluded.run_id, job_id = excluded.job_id, confirmed_at = excluded.confirmed_at,
    seen = excluded.seen, deleted = excluded.deleted, mode = excluded.mode,
    listing_started_at = excluded.listing_started_at,
    last_full_listing_at = CASE WHEN excluded.mode = 'full' THEN excluded.last_full_listing_at
                                ELSE s.last_full_listing_at END,
    last_incremental_listing_at = coalesce(excluded.last_incremental_listing_at,
                                           s.last_incremental_listing_at)

-- name: content_sync_get
SELECT portal_id, content_type::text AS content_type, run_id, job_id, confirmed_at, seen, deleted,
       mode, listing_started_at, last_full_listing_at, last_incremental_listing_at
FROM public.content_syncs WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s


-- name: content_seen_unstored
-- Ids fetch job %(job_id)s saw (an ids-only listing) that are not stored as present, in id
-- order after %(after)s: objects to read by id and store.
SELECT s.hubspot_id FROM public.fetch_seen AS s
WHERE s.job_id = %(job_id)s AND s.hubspot_id <> '' AND s.hubspot_id > %(after)s
  AND NOT EXISTS (SELECT FROM public.content_items AS c
                  WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
                    AND c.hubspot_id = s.hubspot_id AND c.deleted_at IS NULL)
ORDER BY s.hubspot_id
LIMIT %(limit)s

-- name: content_present_counts
-- The type's objects stored as present: live and archived.
SELECT count(*) FILTER (WHERE NOT c.archived) AS live,
       count(*) FILTER (WHERE c.archived) AS archived
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL

-- name: content_children_present
-- A child type's objects stored as present (live, archived), per parent (HubDB rows per table: '<table>:<row>').
SELECT split_part(c.hubspot_id, ':', 1) AS parent_id,
       count(*) FILTER (WHERE NOT c.archived) AS live,
       count(*) FILTER (WHERE c.archived) AS archived
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL
GROUP BY 1

-- name: content_created_times
-- The type's objects stored as present in one state (live or archived), each with its creation
-- time as HubSpot sent it: the first of the keys given that its document holds (the count
-- windows of an incremental read compare these with HubSpot's counts).
SELECT c.hubspot_id,
       (SELECT c.data -> u.key
        FROM unnest(%(keys)s::text[]) WITH ORDINALITY AS u (key, n)
        WHERE c.data ? u.key
        ORDER BY u.n
        LIMIT 1) AS created
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL AND c.archived = %(archived)s

-- name: content_stored_live_among
-- The ids asked about that name objects of the type stored live (present, not archived): what
-- an archived listing shows that the store still holds live, to confirm by id.
SELECT c.hubspot_id FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.hubspot_id = ANY (%(hubspot_ids)b::text[])
  AND c.deleted_at IS NULL AND NOT c.archived
ORDER BY c.hubspot_id
