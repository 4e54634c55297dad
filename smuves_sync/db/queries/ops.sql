-- Operator views and actions (smuves_sync/db/ops.py, `smuves runs/run/jobs/stats/admin`).
-- They run as the login role, across every tenant. content_types is cast to text[]: psycopg
-- does not know the domain's array type. %(now)s NULL means the database's clock.

-- name: ops_run_list
-- Newest first, with the progress of each run's jobs.
SELECT r.id, r.portal_id, r.owner_id, r.kind, r.status, r.content_types::text[] AS content_types,
       r.created_at, r.started_at, r.finished_at,
       count(j.id) AS jobs,
       count(j.id) FILTER (WHERE j.status = 'completed') AS jobs_completed,
       count(j.id) FILTER (WHERE j.status = 'failed') AS jobs_failed,
       coalesce(sum(j.processed), 0)::bigint AS processed,
       sum(j.total)::bigint AS total
FROM public.runs AS r
LEFT JOIN public.jobs AS j ON j.run_id = r.id
WHERE (%(portal_id)s::bigint IS NULL OR r.portal_id = %(portal_id)s)
  AND (%(statuses)s::text[] IS NULL OR r.status = ANY (%(statuses)s::text[]))
  AND (%(kind)s::text IS NULL OR r.kind = %(kind)s::text)
GROUP BY r.id
ORDER BY r.created_at DESC, r.id DESC
LIMIT %(limit)s

-- name: ops_job_list
-- Newest first.
SELECT * FROM public.jobs AS j
WHERE (%(statuses)s::text[] IS NULL OR j.status = ANY (%(statuses)s::text[]))
  AND (%(kinds)s::text[] IS NULL OR j.kind = ANY (%(kinds)s::text[]))
  AND (%(portal_id)s::bigint IS NULL OR j.portal_id = %(portal_id)s)
  AND (%(run_id)s::bigint IS NULL OR j.run_id = %(run_id)s)
ORDER BY j.id DESC
LIMIT %(limit)s

-- name: ops_run_jobs
SELECT * FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: ops_stats_depth
-- Queue depth: jobs by kind and status.
SELECT kind::text AS kind, status::text AS status, count(*) AS jobs
FROM public.jobs
GROUP BY kind, status
ORDER BY kind, status

-- name: ops_stats_pending
-- Pending jobs per kind: those due now, those waiting for a later run_after (retry backoff,
-- a parked rate limit), and how long the oldest due one has been due.
SELECT kind::text AS kind,
       count(*) FILTER (WHERE run_after <= coalesce(%(now)s::timestamptz, now())) AS due,
       count(*) FILTER (WHERE run_after > coalesce(%(now)s::timestamptz, now())) AS waiting,
       coalesce(%(now)s::timestamptz, now())
           - min(run_after) FILTER (WHERE run_after <= coalesce(%(now)s::timestamptz, now()))
           AS oldest_due_age
FROM public.jobs
WHERE status = 'pending'
GROUP BY kind
ORDER BY kind

-- name: ops_stats_expired_leases
-- Running jobs whose last heartbeat is older than their kind's lease: their worker is gone
-- or stuck, and the next claim will take them over (or fail them at their last attempt).
SELECT j.*, coalesce(%(now)s::timestamptz, now()) - j.heartbeat_at AS silent_for
FROM public.jobs AS j
WHERE j.status = 'running'
  AND j.heartbeat_at < coalesce(%(now)s::timestamptz, now())
      - CASE j.kind WHEN 'fetch' THEN %(fetch_lease)s::interval
                    ELSE %(export_lease)s::interval END
ORDER BY j.heartbeat_at, j.id

-- name: ops_job_requeue
SELECT * FROM public.requeue_job(%(job_id)s, %(from_start)s, %(now)s)

-- name: ops_jobs_retry_failed
SELECT * FROM public.retry_failed_jobs(%(portal_id)s, %(run_id)s, %(now)s)

-- name: ops_history_prune
SELECT * FROM public.prune_history(%(older_than)s, %(dry_run)s, %(now)s)
