-- The helpers the queue functions share (migrations/functions/queue.sql), called directly.

-- name: queue_helpers_lease_expired
SELECT j.id, public.job_lease_expired(j, %(now)s, %(fetch_lease)s, %(export_lease)s, %(push_lease)s) AS expired
FROM public.jobs AS j
ORDER BY j.id

-- name: queue_helpers_no_seqscan
SET LOCAL enable_seqscan = off

-- name: queue_helpers_explain_lease_expired
-- The statement shape of claim_jobs's expired-lease look-ups.
EXPLAIN (FORMAT JSON)
SELECT j.id FROM public.jobs AS j
WHERE public.job_lease_expired(j, %(now)s, %(fetch_lease)s, %(export_lease)s, %(push_lease)s)
ORDER BY j.heartbeat_at

-- name: queue_helpers_explain_portal_cap
-- The statement shape of claim_jobs's cap on a portal's running fetches (job_within_portal_cap).
EXPLAIN (FORMAT JSON)
SELECT j.id FROM public.jobs AS j
WHERE j.status = 'pending'
  AND (SELECT * FROM public.job_within_portal_cap(
           j.portal_id, j.id, j.priority, coalesce(j.fair_at, j.run_after), %(now)s, NULL, 5))

-- name: queue_helpers_to_pending
-- The job handed back with a new resume point, the way the queue functions hand it back.
SELECT pending.*
FROM public.jobs AS j,
     LATERAL public.job_to_pending(
         pg_catalog.jsonb_populate_record(j, pg_catalog.jsonb_build_object('cursor', %(cursor)s::text))
     ) AS pending
WHERE j.id = %(job_id)s

-- name: queue_helpers_notify
SELECT public.notify_run_owners(ARRAY(
    SELECT ROW(n.run_id, n.kind, n.message, %(now)s)::public.run_notice
    FROM unnest(%(run_ids)s::bigint[], %(kinds)s::text[], %(messages)s::text[])
         WITH ORDINALITY AS n (run_id, kind, message, ordinality)
    ORDER BY n.ordinality))

-- name: queue_helpers_notifications
SELECT user_id, run_id, kind, message, created_at FROM public.notifications ORDER BY id
