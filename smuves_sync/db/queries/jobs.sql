-- Jobs and runs: reads, creation, and calls of the queue functions (migrations/0004_queue.sql,
-- 0005_queue_runs.sql).
-- content_types is cast to text[]: psycopg does not know the domain's array type.

-- name: job_get
SELECT * FROM public.jobs WHERE id = %(job_id)s

-- name: run_get
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.runs WHERE id = %(run_id)s

-- name: run_create
INSERT INTO public.runs (portal_id, owner_id, kind, content_types)
VALUES (%(portal_id)s, %(owner_id)s, %(kind)s, %(content_types)s::text[])
RETURNING id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
          created_at, started_at, finished_at

-- name: job_enqueue
-- No row back when an equal job is already in flight (the partial unique index on
-- portal, kind and type) or the idempotency key was used before.
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, max_attempts, run_after,
                         total, idempotency_key)
SELECT r.id, r.portal_id, r.kind, %(content_type)s, %(max_attempts)s,
       coalesce(%(run_after)s, now()), %(total)s, %(idempotency_key)s
FROM public.runs AS r WHERE r.id = %(run_id)s
ON CONFLICT DO NOTHING
RETURNING *

-- name: job_list_in_flight
SELECT * FROM public.jobs
WHERE portal_id = %(portal_id)s AND kind = %(kind)s AND status IN ('pending', 'running')
ORDER BY id

-- name: job_claim
-- The columns of the Job record, in its field order (rows.JOB_FIELDS): read as plain tuples.
SELECT id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, run_after,
       locked_at, locked_by, lease_token, heartbeat_at, total, processed, cursor, last_error,
       created_at, finished_at
FROM public.claim_jobs(%(worker)s, %(kinds)s::text[], %(limit)s,
                       %(fetch_lease)s, %(export_lease)s, %(now)s)

-- name: job_claim_next
SELECT * FROM public.claim_next_job(%(worker)s, %(kinds)s::text[],
                                    %(fetch_lease)s, %(export_lease)s, %(now)s)

-- name: job_heartbeat
SELECT * FROM public.heartbeat_job(%(job_id)s, %(lease_token)s, %(now)s)

-- name: job_checkpoint
SELECT * FROM public.checkpoint_job(%(job_id)s, %(lease_token)s, %(cursor)s, %(processed)s,
                                    %(total)s, %(now)s)

-- name: job_complete
SELECT * FROM public.complete_job(%(job_id)s, %(lease_token)s, %(processed)s, %(now)s)

-- name: job_complete_many
-- The arrays are sent in binary (the b placeholders): for a few hundred ids and tokens that
-- is five times cheaper for the client than the text form.
SELECT id FROM public.complete_jobs(%(job_ids)b::bigint[], %(lease_tokens)b::uuid[], NULL,
                                   %(now)s)

-- name: job_fail
SELECT * FROM public.fail_job(%(job_id)s, %(lease_token)s, %(error)s, %(retryable)s,
                              %(backoff_base)s, %(backoff_max)s, %(jitter_ratio)s, %(now)s)

-- name: job_park
SELECT * FROM public.park_job(%(job_id)s, %(lease_token)s, %(until)s, %(reason)s, %(now)s)

-- name: job_release
SELECT * FROM public.release_job(%(job_id)s, %(lease_token)s, %(now)s)

-- name: run_reconcile
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.reconcile_stuck_runs(%(now)s)

-- name: portal_token_for_job
SELECT portal_id, token_encrypted FROM public.portal_token(%(job_id)s, %(lease_token)s)

-- name: jobs_listen
LISTEN smuves_jobs
