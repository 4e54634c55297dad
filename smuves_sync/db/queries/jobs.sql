-- Jobs (smuves_sync/db/jobs.py): reads (the dashboard's dead letter among them), creation,
-- the calls of the queue functions (migrations/functions/queue.sql) and of the operators'
-- actions (requeue_job, retry_failed_jobs). Rows are read by column name (db/rows.py), so
-- `SELECT *` keeps up with the table. %(now)s NULL means the database's clock.

-- name: job_get
-- The operator's (and the tests'): the runtime roles may not read lease_token.
SELECT * FROM public.jobs WHERE id = %(job_id)s

-- name: job_enqueue
-- No row back when the run does not exist, an equal job is already in flight (the partial
-- unique index on portal, kind and type) or the idempotency key was used before. A login
-- that may not add jobs to the run is refused (enqueue_job).
SELECT * FROM public.enqueue_job(%(run_id)s, %(content_type)s, %(priority)s::smallint,
                                    %(max_attempts)s, %(run_after)s, %(total)s,
                                    %(idempotency_key)s, %(schedule_id)s)

-- name: job_list
-- Newest first.
SELECT * FROM public.jobs AS j
WHERE (%(statuses)s::text[] IS NULL OR j.status = ANY (%(statuses)s::text[]))
  AND (%(kinds)s::text[] IS NULL OR j.kind = ANY (%(kinds)s::text[]))
  AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
  AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
ORDER BY j.id DESC
LIMIT %(limit)s

-- name: job_list_in_flight
-- Run by the runtime roles (the orchestrator's dedup, as the API too), which read the jobs'
-- progress only: the lease, the workers' bookkeeping and the operators' error come back NULL.
SELECT id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, run_after,
       NULL::timestamptz AS locked_at, NULL::text AS locked_by,
       NULL::timestamptz AS heartbeat_at, total, processed, NULL::text AS cursor,
       NULL::text AS last_error, last_error_public, NULL::text AS idempotency_key, created_at,
       finished_at, priority, fair_at, NULL::uuid AS lease_token
FROM public.jobs
WHERE portal_id = %(portal_id)s AND kind = %(kind)s AND status IN ('pending', 'running')
ORDER BY id

-- name: job_dead_page
-- Failed (or stopped) jobs, newest first, %(limit)s of them below id %(before_id)s (NULL: from
-- the newest), with their portal's name: the dashboard's dead letter, a walk of jobs_dead_idx
-- (a partial index of failed and stopped jobs) in id order, run inside
-- `Database.custom_plans`. Not job_list: under its `status = ANY (array)` the planner cannot
-- use that index's id order (it does not know the array holds one status), so it sorts every
-- failed job or walks jobs_pkey back through every job newer than the failures it shows.
SELECT j.*, p.name AS portal_name
FROM public.jobs AS j
JOIN public.portals AS p ON p.id = j.portal_id
WHERE j.status = %(status)s
  AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
  AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
  AND (%(content_type)s::text IS NULL OR j.content_type = %(content_type)s::text)
  AND (%(before_id)s::bigint IS NULL OR j.id < %(before_id)s)
ORDER BY j.id DESC
LIMIT %(limit)s

-- name: job_dead_count
-- How many jobs job_dead_page would page through, stopping at %(cap)s + 1.
SELECT count(*) AS jobs FROM (
    SELECT FROM public.jobs AS j
    WHERE j.status = %(status)s
      AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
      AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
      AND (%(content_type)s::text IS NULL OR j.content_type = %(content_type)s::text)
    LIMIT %(cap)s + 1
) AS x

-- name: job_get_many
-- The jobs with these ids (those that exist), newest first.
SELECT j.*, p.name AS portal_name
FROM public.jobs AS j
JOIN public.portals AS p ON p.id = j.portal_id
WHERE j.id = ANY (%(job_ids)s::bigint[])
ORDER BY j.id DESC

-- name: job_claim
-- The queue's one claim; %(run_id)s, when set, limits it to that run's jobs (`smuves sync`).
-- claim_jobs returns its rows in id order. Its own transaction (autocommit, never inside a
-- scope), committed without waiting for the WAL flush: a crash of Postgres can lose the last
-- claims, each whole, and their jobs are claimed again. Nothing durable can depend on a lost
-- claim: every write made under its lease, and every completion, fail or release of it,
-- commits after it, and what a crash loses is the end of the WAL: a commit that survives
-- has everything before it, the claim first (the page writes, and the completions of
-- UNFLUSHED_COMPLETIONS, asynchronous too, are lost with it and made again).
SELECT c.* FROM public.claim_jobs(%(worker)s, %(kinds)s::text[], %(limit)s, %(now)s,
                                     %(run_id)s::bigint, %(portal_max_running)s) AS c,
     pg_catalog.set_config('synchronous_commit', 'off', true) AS asynchronous_commit

-- name: job_claim_after_completion
-- job_claim in the transaction of job_complete_many (complete-and-claim), which commits as
-- the completion says. %(settle_run_ids)s: the runs of the batch it finished,
-- settled in the claim's pass over runs.
SELECT * FROM public.claim_jobs(%(worker)s, %(kinds)s::text[], %(limit)s, %(now)s,
                                   %(run_id)s::bigint, %(portal_max_running)s,
                                   %(settle_run_ids)s::bigint[])

-- name: job_claim_next
-- claim_next_job's claim of one job, made directly: a wrapping sql function that cannot be
-- inlined (SECURITY DEFINER) is planned again on every call. Committed as job_claim is.
SELECT c.* FROM public.claim_jobs(%(worker)s, %(kinds)s::text[], 1, %(now)s, NULL,
                                     %(portal_max_running)s) AS c,
     pg_catalog.set_config('synchronous_commit', 'off', true) AS asynchronous_commit

-- name: job_leases
-- How long a claimed job's lease lasts, per kind: the database decides (job_leases).
SELECT kind, lease FROM public.job_leases ORDER BY kind

-- name: job_heartbeat
SELECT * FROM public.heartbeat_job(%(job_id)s, %(lease_token)s, %(now)s)

-- name: job_checkpoint
SELECT * FROM public.checkpoint_job(%(job_id)s, %(lease_token)s, %(cursor)s, %(processed)s,
                                    %(total)s, %(now)s)

-- name: job_complete
-- complete_job's completion, made directly (see job_claim_next). %(flush)s false: the
-- transaction it is part of commits without waiting for the WAL flush (UNFLUSHED_COMPLETIONS
-- in db/jobs.py says whose); true: the setting is left as the transaction has it (the
-- server's, unless the transaction changed it).
SELECT c.* FROM public.complete_jobs(ARRAY[%(job_id)s::bigint], ARRAY[%(lease_token)s::uuid],
                                        ARRAY[%(processed)s::bigint], %(now)s) AS c,
     pg_catalog.set_config('synchronous_commit',
                           CASE WHEN %(flush)s THEN pg_catalog.current_setting('synchronous_commit')
                                ELSE 'off' END, true) AS commit_mode

-- name: job_complete_many
-- The arrays are sent in binary (the b placeholders): for a few hundred ids and tokens that
-- is five times cheaper for the client than the text form. %(settle)s false: the runs are
-- left for the claim that follows in the same transaction to settle (complete-and-claim,
-- job_claim's settle_run_ids). %(flush)s as job_complete's; the claim shares the commit.
SELECT c.id FROM public.complete_jobs(%(job_ids)b::bigint[], %(lease_tokens)b::uuid[], NULL,
                                        %(now)s, %(settle)s) AS c,
     pg_catalog.set_config('synchronous_commit',
                           CASE WHEN %(flush)s THEN pg_catalog.current_setting('synchronous_commit')
                                ELSE 'off' END, true) AS commit_mode

-- name: job_fail
SELECT * FROM public.fail_job(%(job_id)s, %(lease_token)s, %(error)s, %(retryable)s,
                              %(backoff_base)s, %(backoff_max)s, %(jitter_ratio)s, %(now)s,
                              %(error_public)s)

-- name: job_park
SELECT * FROM public.park_job(%(job_id)s, %(lease_token)s, %(until)s, %(reason)s, %(now)s)

-- name: job_park_for
-- park_job for a wait counted from the database's clock (or the test's %(now)s).
SELECT * FROM public.park_job(%(job_id)s, %(lease_token)s,
                              coalesce(%(now)s::timestamptz, now()) + %(wait)s::interval,
                              %(reason)s, %(now)s)

-- name: job_release
SELECT * FROM public.release_job(%(job_id)s, %(lease_token)s, %(now)s)

-- name: job_portal_token
SELECT portal_id, token_encrypted, time_zone, token_rejected_at
FROM public.portal_token(%(job_id)s, %(lease_token)s)

-- name: job_requeue
SELECT * FROM public.requeue_job(%(job_id)s, %(from_start)s, %(now)s)

-- name: jobs_retry_failed
SELECT * FROM public.retry_failed_jobs(%(portal_id)s, %(run_id)s, %(now)s)

-- name: jobs_listen
LISTEN smuves_jobs
