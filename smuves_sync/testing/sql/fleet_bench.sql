-- scripts/bench_fleet.py: a wave of scheduled fetches over many portals. Run as the login
-- role of a scratch database (it sees every portal).

-- name: fleet_wave_start
-- Every schedule due now: the wave starts. Returns the database's time of it.
WITH due AS (UPDATE public.schedules SET next_run_at = now() RETURNING 1)
SELECT now() AS started_at, (SELECT count(*) FROM due) AS schedules

-- name: fleet_stored_of_portal
SELECT count(*) AS n FROM public.content_items WHERE portal_id = %(portal_id)s

-- name: fleet_fetch_runs
-- Each fetch run: its portal, whether it has settled and when.
SELECT portal_id, status, finished_at FROM public.runs WHERE kind = 'fetch' ORDER BY portal_id

-- name: fleet_backends
-- This database's server processes now (the workers' connections and this one).
SELECT pid FROM pg_catalog.pg_stat_activity WHERE datname = pg_catalog.current_database()

-- name: fleet_storage
-- What the stored objects take: content_items with its TOAST and indexes, per object.
SELECT count(*) AS objects,
       pg_catalog.pg_total_relation_size('public.content_items') AS content_bytes,
       pg_catalog.pg_database_size(pg_catalog.current_database()) AS database_bytes
FROM public.content_items

-- name: fleet_jobs_by_host
-- The jobs each host claimed: the part of locked_by before the pid (SMUVES_WORKER_ID).
SELECT pg_catalog.split_part(j.locked_by, ':', 1) AS host, count(*) AS jobs
FROM public.jobs AS j
WHERE j.locked_by IS NOT NULL
GROUP BY 1
ORDER BY 1
