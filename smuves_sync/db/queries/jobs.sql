-- Jobs and runs: reads, creation, and the queue functions of migrations/0004_queue.sql.
-- content_types is cast to text[] because psycopg does not know the domain's array type.

-- name: job_get
SELECT * FROM public.jobs WHERE id = %(job_id)s

-- name: run_get
SELECT id, portal_id, owner_id, kind, status, content_types::text[] AS content_types,
       created_at, started_at, finished_at
FROM public.runs WHERE id = %(run_id)s
