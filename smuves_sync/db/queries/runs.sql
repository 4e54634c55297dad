-- Runs (smuves_sync/db/runs.py). content_types is cast to text[]: psycopg does not know the
-- domain's array type. %(now)s NULL means the database's clock.

-- name: run_get
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.runs WHERE id = %(run_id)s

-- name: run_create
INSERT INTO public.runs (portal_id, owner_id, kind, content_types, full_read)
VALUES (%(portal_id)s, %(owner_id)s, %(kind)s, %(content_types)s::text[], %(full_read)s)
RETURNING id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
          created_at, started_at, finished_at

-- name: run_jobs
-- Run by the runtime roles too (`smuves sync` follows its run), which may not read
-- lease_token (the column grants on jobs in migrations/0002_schema.sql).
SELECT id, run_id, portal_id, kind, content_type, status, attempts, max_attempts, run_after,
       locked_at, locked_by, heartbeat_at, total, processed, cursor, last_error,
       last_error_public, idempotency_key, created_at, finished_at, priority, fair_at,
       NULL::uuid AS lease_token
FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: run_list
-- The operators' list (`smuves runs`, the dashboard's runs page), across every tenant: runs
-- newest first, filtered (NULL: any; created_to excluded), %(limit)s of them after the keyset
-- (%(before_created)s, %(before_id)s) (NULL: from the newest), each with its portal's name and
-- its jobs' progress. The page is chosen first (runs_created_idx, runs_status_created_idx or
-- runs_portal_created_idx), then only its runs' jobs are summed (jobs_run_idx), so the cost
-- does not grow with the history.
SELECT r.id, r.portal_id, r.owner_id, r.kind, r.status,
       r.content_types::text[] AS content_types, r.created_at, r.started_at, r.finished_at,
       p.name AS portal_name, s.jobs, s.jobs_completed, s.jobs_failed, s.processed, s.total
FROM (
    SELECT * FROM public.runs AS r
    WHERE (%(portal_id)s::bigint IS NULL OR r.portal_id = %(portal_id)s)
      AND (%(statuses)s::text[] IS NULL OR r.status = ANY (%(statuses)s::text[]))
      AND (%(kind)s::text IS NULL OR r.kind = %(kind)s::text)
      AND (%(created_from)s::timestamptz IS NULL OR r.created_at >= %(created_from)s)
      AND (%(created_to)s::timestamptz IS NULL OR r.created_at < %(created_to)s)
      AND (%(before_created)s::timestamptz IS NULL
           OR (r.created_at, r.id) < (%(before_created)s::timestamptz, %(before_id)s::bigint))
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT %(limit)s
) AS r
JOIN public.portals AS p ON p.id = r.portal_id
CROSS JOIN LATERAL (
    SELECT count(*) AS jobs,
           count(*) FILTER (WHERE j.status = 'completed') AS jobs_completed,
           count(*) FILTER (WHERE j.status = 'failed') AS jobs_failed,
           coalesce(sum(j.processed), 0)::bigint AS processed,
           sum(j.total)::bigint AS total
    FROM public.jobs AS j WHERE j.run_id = r.id
) AS s
ORDER BY r.created_at DESC, r.id DESC

-- name: run_detail
-- The run and its jobs in one statement, so in one snapshot: a worker finishing the last job
-- between two reads cannot show a finished job under a run still running. One row per job
-- (the run's columns prefixed r_), or one row with NULL job columns for a run without jobs.
-- Run by the API, which reads a job's progress and its users' note (last_error_public), never
-- the operators' error nor the workers' lease, cursor and keys: those come back NULL.
SELECT r.id AS r_id, r.portal_id AS r_portal_id, r.owner_id AS r_owner_id, r.kind AS r_kind,
       r.status AS r_status, r.content_types::text[] AS r_content_types,
       r.created_at AS r_created_at, r.started_at AS r_started_at,
       r.finished_at AS r_finished_at,
       j.id, j.run_id, j.portal_id, j.kind, j.content_type, j.status, j.attempts,
       j.max_attempts, j.run_after, NULL::timestamptz AS locked_at, NULL::text AS locked_by,
       NULL::timestamptz AS heartbeat_at, j.total, j.processed, NULL::text AS cursor,
       NULL::text AS last_error, j.last_error_public, NULL::text AS idempotency_key,
       j.created_at, j.finished_at, j.priority, j.fair_at, NULL::uuid AS lease_token
FROM public.runs AS r
LEFT JOIN public.jobs AS j ON j.run_id = r.id
WHERE r.id = %(run_id)s
ORDER BY j.id

-- name: run_detail_for_operators
-- run_detail with every column of the jobs but the lease token: the operators' view (the
-- dashboard, as the login role) of who holds a job, where it stands and what failed.
SELECT r.id AS r_id, r.portal_id AS r_portal_id, r.owner_id AS r_owner_id, r.kind AS r_kind,
       r.status AS r_status, r.content_types::text[] AS r_content_types,
       r.created_at AS r_created_at, r.started_at AS r_started_at,
       r.finished_at AS r_finished_at,
       j.id, j.run_id, j.portal_id, j.kind, j.content_type, j.status, j.attempts,
       j.max_attempts, j.run_after, j.locked_at, j.locked_by, j.heartbeat_at, j.total,
       j.processed, j.cursor, j.last_error, j.last_error_public, j.idempotency_key,
       j.created_at, j.finished_at, j.priority, j.fair_at, NULL::uuid AS lease_token
FROM public.runs AS r
LEFT JOIN public.jobs AS j ON j.run_id = r.id
WHERE r.id = %(run_id)s
ORDER BY j.id

-- name: run_in_flight
-- The newest %(limit)s pending or running runs (runs_open_idx), one row per job, the run's
-- columns prefixed r_ as in run_detail, with the portal's name (the dashboard's overview).
SELECT r.id AS r_id, r.portal_id AS r_portal_id, r.owner_id AS r_owner_id, r.kind AS r_kind,
       r.status AS r_status, r.content_types::text[] AS r_content_types,
       r.created_at AS r_created_at, r.started_at AS r_started_at,
       r.finished_at AS r_finished_at, p.name AS portal_name, j.*
FROM (
    SELECT * FROM public.runs AS r
    WHERE r.status IN ('pending', 'running')
    ORDER BY r.id DESC
    LIMIT %(limit)s
) AS r
JOIN public.portals AS p ON p.id = r.portal_id
JOIN public.jobs AS j ON j.run_id = r.id
ORDER BY r.id DESC, j.id

-- name: run_count_in_flight
SELECT count(*) AS runs FROM public.runs AS r WHERE r.status IN ('pending', 'running')

-- name: run_stop
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.stop_run(%(run_id)s, %(now)s)

-- name: run_operator_stop
-- The dashboard's Stop, as the login role (any run): run_to_stopped, the
-- steps of run_stop's stop_run without its membership check. The run's open jobs end
-- stopped, then the run settles. No row: no such run.
SELECT r.id, r.portal_id, r.owner_id, r.kind, r.status,
       r.content_types::text[] AS content_types, r.created_at, r.started_at, r.finished_at
FROM public.run_to_stopped(%(run_id)s, 'stopped by an operator', %(now)s) AS r

-- name: run_reconcile
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.reconcile_stuck_runs(%(now)s)

-- name: runs_prune
SELECT * FROM public.prune_runs(%(older_than)s, %(dry_run)s, %(now)s)
