-- workers (smuves_sync/db/workers.py, migrations/functions/workers.sql): which worker
-- processes are alive. Workers write their own row through worker_register,
-- worker_heartbeat and worker_unregister (SECURITY DEFINER, fenced by the token the first
-- returns); `smuves stats`, `smuves run(s)` and the dashboard read as the login role;
-- /metrics counts through metrics_workers_live. Liveness is worker_alive's rule, nowhere
-- else. %(now)s NULL means the database's clock.

-- name: worker_register
SELECT id, token
FROM public.worker_register(%(name)s, %(host)s, %(pid)s, %(kinds)s::text[], %(concurrency)s,
                            %(run_id)s, %(heartbeat_every)s, %(now)s)

-- name: worker_heartbeat
SELECT public.worker_heartbeat(%(id)s, %(token)s, %(job_ids)s::bigint[], %(now)s)

-- name: worker_unregister
SELECT public.worker_unregister(%(id)s, %(token)s)

-- name: worker_list
-- Every registered worker, the live ones first, then by start; never the token's hash.
WITH clock AS (SELECT coalesce(%(now)s::timestamptz, now()) AS now)
SELECT w.id, w.name, w.host, w.pid, w.kinds, w.concurrency, w.run_id, w.heartbeat_every,
       w.started_at, w.last_seen_at, w.job_ids,
       public.worker_alive(w.last_seen_at, w.heartbeat_every, c.now) AS alive
FROM public.workers AS w, clock AS c
ORDER BY alive DESC, w.started_at, w.id

-- name: metrics_workers_live
SELECT public.metrics_workers_live(%(now)s)

-- name: run_waiting_for_worker
-- Of runs %(run_ids)s, those still open with a job that could be worked now (pending and
-- due, or running past its lease) and no live worker that would claim it: none of the run's
-- kind, working any run or this one.
WITH clock AS (SELECT coalesce(%(now)s::timestamptz, now()) AS now)
SELECT r.id
FROM public.runs AS r, clock AS c
WHERE r.id = ANY (%(run_ids)s::bigint[])
  AND r.status IN ('pending', 'running')
  AND EXISTS (SELECT FROM public.jobs AS j
              JOIN public.job_leases AS l ON l.kind = j.kind
              WHERE j.run_id = r.id
                AND ((j.status = 'pending' AND j.run_after <= c.now)
                     OR (j.status = 'running' AND j.heartbeat_at < c.now - l.lease)))
  AND NOT EXISTS (SELECT FROM public.workers AS w
                  WHERE public.worker_alive(w.last_seen_at, w.heartbeat_every, c.now)
                    AND r.kind = ANY (w.kinds)
                    AND (w.run_id IS NULL OR w.run_id = r.id))
ORDER BY r.id
