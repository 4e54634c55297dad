-- What scripts/bench_sync.py's history phase needs beside the product's queries
-- (smuves_sync/testing/history_bench.py). Run as the login role of a scratch database.

-- name: history_bench_fetch_job
-- A fetch run of the portal with its job of one type running, as a worker holds it while it
-- stores pages: the history triggers take their run from it (content_history_run), and the worker
-- writes under its lease (worker_holds_lease), which does not expire while the bench runs.
WITH run AS (
    INSERT INTO public.runs (portal_id, kind, status, content_types, started_at)
    VALUES (%(portal_id)s, 'fetch', 'running', ARRAY[%(content_type)s]::text[], now())
    RETURNING id
)
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, status, attempts, locked_at,
                         locked_by, lease_token, heartbeat_at)
SELECT run.id, %(portal_id)s, 'fetch', %(content_type)s, 'running', 1, now(), 'bench',
       gen_random_uuid(), now() + interval '1 day'
FROM run
RETURNING *

-- name: bench_lease_job
-- A lease for a worker that stores pages of the portal outside any fetch (the ingest and
-- export phases): an export job running, of a type no phase exports, that does not expire
-- while the bench runs. No fetch is in flight: history attributes what it stores to no run.
WITH run AS (
    INSERT INTO public.runs (portal_id, kind, status, content_types, started_at)
    VALUES (%(portal_id)s, 'export', 'running', ARRAY['hubdb_table']::text[], now())
    RETURNING id
)
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, status, attempts, locked_at,
                         locked_by, lease_token, heartbeat_at)
SELECT run.id, %(portal_id)s, 'export', 'hubdb_table', 'running', 1, now(), 'bench',
       gen_random_uuid(), now() + interval '1 day'
FROM run
RETURNING *

-- name: history_bench_triggers_off
-- The same database without history: content_items' history triggers disabled.
ALTER TABLE public.content_items DISABLE TRIGGER content_history_begin,
    DISABLE TRIGGER content_history_inserted, DISABLE TRIGGER content_history_updated,
    DISABLE TRIGGER content_history_removed

-- name: history_bench_storage
-- Bytes (table, TOAST and indexes) and rows of content_items and content_versions, and the
-- versions of the history (content_history: those rows and the first versions kept in rows).
SELECT pg_total_relation_size('public.content_items') AS items_bytes,
       (SELECT count(*) FROM public.content_items) AS items,
       pg_total_relation_size('public.content_versions') AS versions_bytes,
       (SELECT count(*) FROM public.content_history) AS versions,
       (SELECT count(*) FROM public.content_versions) AS version_rows,
       (SELECT count(*) FROM public.content_versions WHERE document IS NOT NULL) AS documents
