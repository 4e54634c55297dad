-- The dashboard's load check (tests/integration/dashboard/test_load.py): a database with a
-- million finished jobs, seeded with generate_series in a few statements.
--
-- 1,000 portals; 192,000 fetch runs of 5 jobs and 40,000 export runs of 1 job, interleaved,
-- over the last 30 days: 1,000,000 finished jobs (about 7,500 failed and 1,200 stopped, the
-- rest completed), a
-- notification per run, a schedule per portal, 500 objects per type for 20 portals, an hour
-- of HubSpot minutes, 1,000 audit rows; then 40 runs in flight (pending and running jobs).
-- Foreign keys and triggers are not fired while seeding (session_replication_role =
-- replica, superuser only): the rows are consistent by construction.

-- name: load_seed_portals
INSERT INTO public.portals (id, name, owner_id, token_encrypted)
SELECT 9000000 + g, 'Load portal ' || g, %(owner_id)s, '\x00'::bytea
FROM generate_series(1, 1000) AS g

-- name: load_seed_members
INSERT INTO public.portal_members (portal_id, user_id, role)
SELECT p.id, p.owner_id, 'owner' FROM public.portals AS p WHERE p.id > 9000000

-- name: load_seed_runs
-- Run r belongs to portal r mod 1000; 5 in 29 runs export one type, the others fetch all five.
INSERT INTO public.runs (id, portal_id, owner_id, kind, status, content_types, created_at,
                         started_at, finished_at)
SELECT r, 9000001 + r %% 1000, %(owner_id)s,
       CASE WHEN r %% 29 < 5 THEN 'export' ELSE 'fetch' END,
       CASE WHEN r %% 31 = 0 AND r %% 29 >= 5 THEN 'partially_failed'
            WHEN r %% 31 = 0 THEN 'failed'
            WHEN r %% 193 = 0 THEN 'stopped'
            ELSE 'completed' END,
       CASE WHEN r %% 29 < 5 THEN '{site_page}'::text[]
            ELSE '{site_page,landing_page,blog_post,hubdb_table,hubdb_row}'::text[] END,
       t, t + interval '2 seconds', t + interval '3 minutes'
FROM generate_series(1, 232000) AS r,
     LATERAL (SELECT now() - interval '30 days' + (r * interval '30 days') / 232000 AS t) AS c

-- name: load_seed_jobs
INSERT INTO public.jobs (id, run_id, portal_id, kind, content_type, status, attempts,
                         max_attempts, run_after, locked_at, locked_by, heartbeat_at, total,
                         processed, cursor, last_error, created_at, finished_at)
SELECT row_number() OVER (ORDER BY r.id, t.n), r.id, r.portal_id, r.kind, t.content_type,
       s.status, CASE s.status WHEN 'failed' THEN 3 ELSE 1 END, 3, r.created_at,
       r.started_at, 'load-worker:1', r.finished_at, 1000,
       CASE s.status WHEN 'completed' THEN 1000 ELSE 400 END, 'c1.load',
       CASE s.status WHEN 'failed' THEN 'HubSpot answered 503 three times; gave up'
                     WHEN 'stopped' THEN 'stopped on request' END,
       r.created_at, r.finished_at - (5 - t.n) * interval '20 seconds'
FROM public.runs AS r
CROSS JOIN LATERAL (
    SELECT u.content_type, u.n FROM unnest(r.content_types::text[]) WITH ORDINALITY AS u (content_type, n)
) AS t
CROSS JOIN LATERAL (
    SELECT CASE WHEN r.status IN ('partially_failed', 'failed')
                     AND t.n = least(3, cardinality(r.content_types)) THEN 'failed'
                WHEN r.status = 'stopped' AND t.n = cardinality(r.content_types) THEN 'stopped'
                ELSE 'completed' END AS status
) AS s
WHERE r.portal_id > 9000000

-- name: load_seed_notifications
INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
SELECT r.owner_id, r.id, 'run_' || r.status, 'Run ' || r.id || ' ' || r.status, r.finished_at
FROM public.runs AS r WHERE r.portal_id > 9000000 AND r.status <> 'stopped'

-- name: load_seed_schedules
INSERT INTO public.schedules (portal_id, owner_id, cron_expression, content_types, next_run_at)
SELECT p.id, p.owner_id, '0 3 * * *', '{site_page,blog_post}'::text[],
       date_trunc('day', now()) + interval '1 day 3 hours'
FROM public.portals AS p WHERE p.id > 9000000

-- name: load_seed_content
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, name, archived, data,
                                  first_seen_run, changed_run, version)
SELECT 9000000 + p, t, t || '-' || i, 'Object ' || i, i %% 20 = 0,
       jsonb_build_object('id', i), 1, 1, 1
FROM generate_series(1, 20) AS p,
     unnest('{site_page,landing_page,blog_post,hubdb_table,hubdb_row}'::text[]) AS t,
     generate_series(1, 500) AS i

-- name: load_seed_minutes
INSERT INTO public.hubspot_minutes (minute, requests, rate_limited)
SELECT date_trunc('minute', now()) - m * interval '1 minute', 150 + m, m %% 7
FROM generate_series(0, 59) AS m

-- name: load_seed_actions
INSERT INTO public.operator_actions (actor, client, action, target, outcome)
SELECT 'load', '127.0.0.1', 'job_retry', jsonb_build_object('job_ids', jsonb_build_array(g)),
       '{}'::jsonb
FROM generate_series(1, 1000) AS g

-- name: load_seed_in_flight
-- 40 open runs of other portals, each with a running and two pending jobs.
WITH r AS (
    INSERT INTO public.runs (id, portal_id, owner_id, kind, status, content_types, started_at)
    SELECT 300000 + g, 9000000 + g, %(owner_id)s, 'fetch', 'running',
           '{site_page,blog_post,hubdb_row}'::text[], now()
    FROM generate_series(1, 40) AS g
    RETURNING id, portal_id
)
INSERT INTO public.jobs (id, run_id, portal_id, kind, content_type, status, attempts,
                         locked_at, locked_by, lease_token, heartbeat_at, total, processed)
SELECT 2000000 + r.id * 3 + t.n, r.id, r.portal_id, 'fetch', t.content_type,
       CASE WHEN t.n = 1 THEN 'running' ELSE 'pending' END,
       CASE WHEN t.n = 1 THEN 1 ELSE 0 END,
       CASE WHEN t.n = 1 THEN now() END, CASE WHEN t.n = 1 THEN 'load-worker:2' END,
       CASE WHEN t.n = 1 THEN gen_random_uuid() END, CASE WHEN t.n = 1 THEN now() END,
       CASE WHEN t.n = 1 THEN 5000 END, CASE WHEN t.n = 1 THEN 1234 ELSE 0 END
FROM r CROSS JOIN unnest('{site_page,blog_post,hubdb_row}'::text[]) WITH ORDINALITY AS t (content_type, n)

-- name: load_seed_sequences
SELECT setval(pg_get_serial_sequence('public.runs', 'id'), 400000),
       setval(pg_get_serial_sequence('public.jobs', 'id'), 3000000)

-- name: load_vacuum
VACUUM (ANALYZE) public.jobs, public.runs, public.notifications, public.content_items,
                 public.portals, public.schedules, public.hubspot_minutes,
                 public.operator_actions

-- name: load_count_finished_jobs
SELECT count(*) FROM public.jobs WHERE finished_at IS NOT NULL
