-- Runs follow their jobs (DESIGN §4): a run settles in the transaction that finishes its
-- last job (the queue functions of 0004 call settle_runs), and reconcile_stuck_runs heals
-- runs that were left behind. Same conventions as 0004.

SET LOCAL ROLE smuves_owner;

-- Settle runs whose jobs are all finished, from COUNT(*) FILTER over their jobs:
--   any job still pending/running  -> unchanged
--   any job stopped                -> stopped (someone stopped the run; that wins)
--   every job completed            -> completed
--   every job failed               -> failed
--   otherwise                      -> partially_failed
-- Runs without jobs are left alone. The run rows are locked (in id order) by one statement
-- and counted by the next, which sees every job change committed before the lock was
-- granted: two workers finishing a run's last two jobs at once cannot both miss the end.
CREATE FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
    BEGIN
        PERFORM 1 FROM public.runs AS r
        WHERE r.id = ANY (p_run_ids) AND r.status IN ('pending', 'running')
        ORDER BY r.id
        FOR NO KEY UPDATE;

        RETURN QUERY
        WITH counts AS (
            SELECT j.run_id,
                   count(*) AS total,
                   count(*) FILTER (WHERE j.status IN ('pending', 'running')) AS open,
                   count(*) FILTER (WHERE j.status = 'completed') AS completed,
                   count(*) FILTER (WHERE j.status = 'failed') AS failed,
                   count(*) FILTER (WHERE j.status = 'stopped') AS stopped
            FROM public.jobs AS j
            WHERE j.run_id = ANY (p_run_ids)
            GROUP BY j.run_id
        )
        UPDATE public.runs AS r
        SET status = CASE
                WHEN c.stopped > 0 THEN 'stopped'
                WHEN c.completed = c.total THEN 'completed'
                WHEN c.failed = c.total THEN 'failed'
                ELSE 'partially_failed'
            END,
            started_at = coalesce(r.started_at, v_now),
            finished_at = v_now
        FROM counts AS c
        WHERE r.id = c.run_id AND c.open = 0 AND r.status IN ('pending', 'running')
        RETURNING r.*;
    END
    $$;

-- Heal runs left pending/running although all their jobs are finished (a worker died
-- between finishing a job and settling, or jobs were finished by hand), and mark running
-- the pending runs whose jobs have started. Returns the runs it settled.
CREATE FUNCTION public.reconcile_stuck_runs(p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_run_ids bigint[];
    BEGIN
        WITH started AS (
            SELECT r.id FROM public.runs AS r
            WHERE r.status = 'pending'
              AND EXISTS (SELECT FROM public.jobs AS j
                          WHERE j.run_id = r.id AND j.status <> 'pending')
            ORDER BY r.id
            FOR NO KEY UPDATE SKIP LOCKED
        )
        UPDATE public.runs AS r
        SET status = 'running', started_at = coalesce(r.started_at, v_now)
        FROM started WHERE r.id = started.id;

        SELECT array_agg(r.id) INTO v_run_ids FROM public.runs AS r
        WHERE r.status IN ('pending', 'running')
          AND EXISTS (SELECT FROM public.jobs AS j WHERE j.run_id = r.id)
          AND NOT EXISTS (SELECT FROM public.jobs AS j
                          WHERE j.run_id = r.id AND j.status IN ('pending', 'running'));
        IF v_run_ids IS NULL THEN
            RETURN;
        END IF;
        RETURN QUERY SELECT * FROM public.settle_runs(v_run_ids, v_now);
    END
    $$;

GRANT EXECUTE ON FUNCTION public.reconcile_stuck_runs(timestamptz) TO smuves_worker;
