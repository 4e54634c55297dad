-- Runs (smuves_sync/db/runs.py). content_types is cast to text[]: psycopg does not know the
-- domain's array type. %(now)s NULL means the database's clock.

-- name: run_get
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.runs WHERE id = %(run_id)s

-- name: run_create
INSERT INTO public.runs (portal_id, owner_id, kind, content_types)
VALUES (%(portal_id)s, %(owner_id)s, %(kind)s, %(content_types)s::text[])
RETURNING id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
          created_at, started_at, finished_at

-- name: run_jobs
SELECT * FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: run_list
-- Newest first, with the progress of each run's jobs (operators, across every tenant).
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

-- name: run_detail
-- The run and its jobs in one statement, so in one snapshot: a worker finishing the last job
-- between two reads cannot show a finished job under a run still running. One row per job
-- (the run's columns prefixed r_), or one row with NULL job columns for a run without jobs.
SELECT r.id AS r_id, r.portal_id AS r_portal_id, r.owner_id AS r_owner_id, r.kind AS r_kind,
       r.status AS r_status, r.content_types::text[] AS r_content_types,
       r.created_at AS r_created_at, r.started_at AS r_started_at,
       r.finished_at AS r_finished_at, j.*
FROM public.runs AS r
LEFT JOIN public.jobs AS j ON j.run_id = r.id
WHERE r.id = %(run_id)s
ORDER BY j.id

-- name: run_stop
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.stop_run(%(run_id)s, %(now)s)

-- name: run_reconcile
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.reconcile_stuck_runs(%(now)s)

-- name: history_prune
SELECT * FROM public.prune_history(%(older_than)s, %(dry_run)s, %(now)s)
