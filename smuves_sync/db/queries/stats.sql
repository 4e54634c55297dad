-- Monitoring reads (smuves_sync/db/stats.py): `smuves stats` as the login role, across every
-- tenant; /metrics and /healthz as smuves_app, through SECURITY DEFINER functions that return
-- counts only (migrations/0008). %(now)s NULL means the database's clock.

-- name: stats_depth
-- Queue depth: jobs by kind and status.
SELECT kind::text AS kind, status::text AS status, count(*) AS jobs
FROM public.jobs
GROUP BY kind, status
ORDER BY kind, status

-- name: stats_pending
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

-- name: stats_expired_leases
-- Running jobs whose last heartbeat is older than their kind's lease: their worker is gone
-- or stuck, and the next claim will take them over (or fail them at their last attempt).
SELECT j.*, coalesce(%(now)s::timestamptz, now()) - j.heartbeat_at AS silent_for
FROM public.jobs AS j
WHERE j.status = 'running'
  AND j.heartbeat_at < coalesce(%(now)s::timestamptz, now())
      - CASE j.kind WHEN 'fetch' THEN %(fetch_lease)s::interval
                    ELSE %(export_lease)s::interval END
ORDER BY j.heartbeat_at, j.id

-- name: metrics_jobs
SELECT kind, status, jobs, oldest_pending_seconds FROM public.metrics_jobs(%(now)s)

-- name: metrics_job_durations
SELECT kind, status, bucket, jobs, seconds
FROM public.metrics_job_durations(%(bounds)s::float8[])

-- name: migration_versions
-- /healthz: smuves_app may read this one column of the ledger.
SELECT version FROM public.schema_migrations ORDER BY version
