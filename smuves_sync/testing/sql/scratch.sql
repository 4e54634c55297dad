-- Scratch databases and a seeded job backlog for benchmarks (smuves_sync/testing/scratch.py).
-- {db} is an identifier filled in with psycopg.sql.Identifier.

-- name: database_create
CREATE DATABASE {db}

-- name: database_drop
DROP DATABASE IF EXISTS {db} WITH (FORCE)

-- name: seed_user
INSERT INTO public.app_users (email) VALUES (%(email)s) RETURNING id

-- name: seed_backlog
-- `portals` portals numbered from `first_portal`, dealt in turn to the users `owner_ids`, each
-- with one run of `kind` and one pending job per content type (the in-flight dedup allows no
-- more per portal), due at `run_after` (NULL: now). Returns the job ids.
WITH p AS (
    INSERT INTO public.portals (id, name, owner_id)
    SELECT g, 'portal ' || g,
           (%(owner_ids)s::uuid[])[(g - %(first_portal)s) %% cardinality(%(owner_ids)s::uuid[]) + 1]
    FROM generate_series(%(first_portal)s::bigint, %(first_portal)s::bigint + %(portals)s - 1) AS g
    RETURNING id, owner_id,
              (id - %(first_portal)s) / cardinality(%(owner_ids)s::uuid[]) + 1 AS busy
), r AS (
    INSERT INTO public.runs (portal_id, owner_id, kind, content_types)
    SELECT p.id, p.owner_id, %(kind)s, %(content_types)s::text[] FROM p
    RETURNING id, portal_id
)
-- Each placed in line as enqueue_job places it when the portals' runs
-- start in id order: a portal that is its owner's n-th busy one places its k-th job in
-- flight k * n + n - 1 quanta of 10 s after it is due.
INSERT INTO public.jobs (run_id, portal_id, kind, content_type, run_after, fair_at)
SELECT r.id, r.portal_id, %(kind)s, t.t, coalesce(%(run_after)s, now()),
       coalesce(%(run_after)s, now())
       + ((t.k - 1) * p.busy + p.busy - 1) * interval '10 seconds'
FROM r JOIN p ON p.id = r.portal_id
CROSS JOIN unnest(%(content_types)s::text[]) WITH ORDINALITY AS t (t, k)
ORDER BY r.id, t.k  -- a run's jobs side by side, as the orchestrator creates them
RETURNING id

-- name: seed_analyze
ANALYZE public.portals, public.runs, public.jobs

-- name: seed_runs_open
-- The runs of the backlog not yet settled: after a drain, none (every job finished, so the
-- completion of each run's last job settled it).
SELECT count(*) AS open FROM public.runs WHERE status IN ('pending', 'running')
