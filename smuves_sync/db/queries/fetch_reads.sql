-- fetch_reads (smuves_sync/db/fetch_reads.py): how each fetch job reads
-- its type, what it cost; and what decides how it reads.

-- name: fetch_read_basis
-- Whether the job's run asked for a full read, the type's last completed fetch (when its
-- listing began, when the last full one did) and the database's clock.
SELECT r.full_read, s.listing_started_at, s.last_full_listing_at, now() AS now
FROM public.runs AS r
LEFT JOIN public.content_syncs AS s
       ON s.portal_id = %(portal_id)s AND s.content_type = %(content_type)s
WHERE r.id = %(run_id)s

-- name: fetch_read_bases
-- The last completed fetch of each of the portal's types asked about, and the database's
-- clock: what a fetch started now would read incrementally (the orchestrator counts only the
-- others up front).
SELECT s.content_type::text AS content_type, s.listing_started_at, s.last_full_listing_at,
       now() AS now
FROM public.content_syncs AS s
WHERE s.portal_id = %(portal_id)s AND s.content_type = ANY (%(content_types)s::text[])

-- name: fetch_read_start
-- A listing starts (again) from the beginning: how it reads, from when; its costs so far kept
-- (requests are spent whatever the attempt), its objects counted afresh.
INSERT INTO public.fetch_reads AS f
    (job_id, run_id, portal_id, content_type, mode, reason, since, listing_started_at)
VALUES (%(job_id)s, %(run_id)s, %(portal_id)s, %(content_type)s, %(mode)s, %(reason)s,
        %(since)s, now())
ON CONFLICT (job_id) DO UPDATE
SET mode = excluded.mode, reason = excluded.reason, since = excluded.since,
    listing_started_at = excluded.listing_started_at, changed = 0, deleted = 0, unchanged = 0,
    parent_states = NULL
RETURNING job_id, content_type::text AS content_type, mode, reason, since, listing_started_at,
          requests, changed, deleted, unchanged, archived_pass_requests,
          count_window_requests, full_read_requests

-- name: fetch_read_get
SELECT job_id, content_type::text AS content_type, mode, reason, since, listing_started_at,
       requests, changed, deleted, unchanged, archived_pass_requests, count_window_requests,
       full_read_requests
FROM public.fetch_reads WHERE job_id = %(job_id)s

-- name: fetch_read_parents_keep
-- What the job's listing of a parent type showed of every live parent (a JSON array).
UPDATE public.fetch_reads SET parent_states = %(states)s WHERE job_id = %(job_id)s

-- name: fetch_read_run_parents
-- The run's fetch job of a parent type: its status, when its listing began and the parents it
-- kept (NULL: none kept), and the database's clock.
SELECT j.status::text AS status, f.listing_started_at, f.parent_states AS states, now() AS now
FROM public.jobs AS j
LEFT JOIN public.fetch_reads AS f ON f.job_id = j.id
WHERE j.run_id = %(run_id)s AND j.portal_id = %(portal_id)s AND j.kind = 'fetch'
  AND j.content_type = %(content_type)s
ORDER BY j.id DESC
LIMIT 1

-- name: fetch_read_began_by
-- The job's listing is taken to have begun no later than `at` (what it reads was listed then).
UPDATE public.fetch_reads SET listing_started_at = least(listing_started_at, %(at)s)
WHERE job_id = %(job_id)s

-- name: fetch_read_add
UPDATE public.fetch_reads
SET requests = requests + %(requests)s, changed = changed + %(changed)s,
    deleted = deleted + %(deleted)s, unchanged = unchanged + %(unchanged)s,
    archived_pass_requests = archived_pass_requests + %(archived_pass)s,
    count_window_requests = count_window_requests + %(count_windows)s,
    full_read_requests = full_read_requests + %(full_read)s
WHERE job_id = %(job_id)s

-- name: fetch_reads_of_run
SELECT job_id, content_type::text AS content_type, mode, reason, since, listing_started_at,
       requests, changed, deleted, unchanged, archived_pass_requests, count_window_requests,
       full_read_requests
FROM public.fetch_reads WHERE run_id = %(run_id)s ORDER BY job_id
