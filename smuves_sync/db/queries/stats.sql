-- Monitoring reads (smuves_sync/db/stats.py): `smuves stats` and the dashboard's overview as
-- the login role, across every tenant; /metrics and /healthz as smuves_app, through SECURITY
-- DEFINER functions that return counts only (metrics_jobs, metrics_job_durations,
-- metrics_workers_live). %(now)s NULL means the database's clock. The overview's figures
-- (job_*) are read inside `Database.custom_plans` and walk the partial indexes of jobs
-- (jobs_claimable_idx, jobs_lease_idx, jobs_dead_idx, jobs_completed_idx): none of them reads
-- more than its cap or its time range, whatever the number of finished jobs.

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
-- The leases are the database's (job_leases).
SELECT j.*, coalesce(%(now)s::timestamptz, now()) - j.heartbeat_at AS silent_for
FROM public.jobs AS j
JOIN public.job_leases AS l ON l.kind = j.kind
WHERE j.status = 'running'
  AND j.heartbeat_at < coalesce(%(now)s::timestamptz, now()) - l.lease
ORDER BY j.heartbeat_at, j.id

-- name: metrics_jobs
SELECT kind, status, jobs, oldest_pending_seconds FROM public.metrics_jobs(%(now)s)

-- name: metrics_job_durations
SELECT kind, status, bucket, jobs, seconds
FROM public.metrics_job_durations(%(bounds)s::float8[])

-- name: migration_versions
-- /healthz: smuves_app may read this one column of the ledger.
SELECT version FROM public.schema_migrations ORDER BY version

-- name: job_count_by_state
-- Jobs of each kind in each state, each count stopping at %(cap)s + 1 (the caller shows
-- "more than cap"): pending due now, pending waiting for a later run_after (backoff, a parked
-- limit), running, failed, stopped, and completed in the last hour and day. Every count walks
-- one partial index of jobs and no count reads more than cap + 1 entries; `capped` says
-- that there are more than %(cap)s.
WITH clock AS (
    SELECT coalesce(%(now)s::timestamptz, now()) AS now
), kinds AS (
    SELECT k.kind FROM unnest(%(kinds)s::text[]) AS k (kind)
), counted AS (
    SELECT k.kind, 'pending_due' AS state,
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'pending' AND j.kind = k.kind
                                    AND j.run_after <= c.now
                                  LIMIT %(cap)s + 1) AS x) AS jobs
    FROM kinds AS k, clock AS c
    UNION ALL
    SELECT k.kind, 'pending_waiting',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'pending' AND j.kind = k.kind
                                    AND j.run_after > c.now
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, clock AS c
    UNION ALL
    -- heartbeat_at IS NOT NULL holds for every running job; it lets jobs_lease_idx answer.
    SELECT k.kind, 'running',
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'running' AND j.heartbeat_at IS NOT NULL
                                    AND j.kind = k.kind
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k
    UNION ALL
    -- Failed and stopped: `status IN (…)` says what s.status can be, so that jobs_dead_idx
    -- (a partial index of those two) may answer for either.
    SELECT k.kind, s.status,
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = s.status AND j.status IN ('failed', 'stopped')
                                    AND j.kind = k.kind
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, (VALUES ('failed'), ('stopped')) AS s (status)
    UNION ALL
    -- Completed in the last hour and in the last day: two ranges of jobs_completed_idx.
    SELECT k.kind, s.state,
           (SELECT count(*) FROM (SELECT FROM public.jobs AS j
                                  WHERE j.status = 'completed' AND j.kind = k.kind
                                    AND j.finished_at > s.since
                                  LIMIT %(cap)s + 1) AS x)
    FROM kinds AS k, clock AS c,
         LATERAL (VALUES ('completed_hour', c.now - interval '1 hour'),
                         ('completed_day', c.now - interval '1 day')) AS s (state, since)
)
SELECT kind, state, least(jobs, %(cap)s) AS jobs, jobs > %(cap)s AS capped FROM counted

-- name: job_oldest_due
-- Per kind, how long the oldest due pending job has waited (NULL: none is due): one probe
-- of jobs_claimable_idx, oldest first. stats_pending reports the same age, but beside
-- counts of every pending job; the overview counts up to a cap (job_count_by_state).
SELECT k.kind,
       c.now - (SELECT j.run_after FROM public.jobs AS j
                WHERE j.status = 'pending' AND j.kind = k.kind AND j.run_after <= c.now
                ORDER BY j.run_after, j.id
                LIMIT 1) AS age
FROM unnest(%(kinds)s::text[]) AS k (kind),
     (SELECT coalesce(%(now)s::timestamptz, now()) AS now) AS c

-- name: job_completed_per_minute
-- Completed jobs in each of the last %(minutes)s minutes (the current one last), zeros
-- included; a range of jobs_completed_idx.
WITH clock AS (
    SELECT date_trunc('minute', coalesce(%(now)s::timestamptz, now())) AS minute
), done AS (
    SELECT date_trunc('minute', j.finished_at) AS minute, count(*) AS jobs
    FROM public.jobs AS j, clock AS c
    WHERE j.status = 'completed'
      AND j.finished_at >= c.minute - (%(minutes)s - 1) * interval '1 minute'
      AND j.finished_at < c.minute + interval '1 minute'
    GROUP BY 1
)
SELECT m.minute, coalesce(d.jobs, 0) AS value
FROM clock AS c
CROSS JOIN generate_series(c.minute - (%(minutes)s - 1) * interval '1 minute', c.minute,
                           interval '1 minute') AS m (minute)
LEFT JOIN done AS d ON d.minute = m.minute
ORDER BY m.minute
