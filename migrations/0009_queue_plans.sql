-- Cached plans for the hot queue functions.
--
-- PL/pgSQL plans each statement afresh for its first calls and keeps doing so whenever the
-- generic plan looks costlier; for these short statements planning cost more than running
-- them. Each statement is written so that its generic plan is the right one whatever the
-- parameters (rows are found by primary key through `= ANY (ARRAY(...))`, never by a join
-- whose size the planner must guess), and the functions ask for that plan always. Same
-- contracts as in 0004/0005; only how the work is planned changes.

SET LOCAL ROLE smuves_owner;

CREATE OR REPLACE FUNCTION public.claim_jobs(
    p_worker text,
    p_kinds text[],
    p_limit integer,
    p_fetch_lease interval DEFAULT '5 minutes',
    p_export_lease interval DEFAULT '2 minutes',
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_shortest interval := least(p_fetch_lease, p_export_lease);
        v_failed_runs bigint[];
        v_claimed public.jobs[];
        v_more public.jobs[];
        v_run_ids bigint[];
    BEGIN
        IF p_limit IS NULL OR p_limit < 1 THEN
            RAISE EXCEPTION 'claim_jobs: p_limit must be at least 1, got %', p_limit
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        -- Expired leases at their last attempt: fail, with a reason and a notification to
        -- the run's owner (the portal's owner for runs nobody started by hand).
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'running'
              AND j.heartbeat_at < v_now - v_shortest
              AND j.heartbeat_at < v_now - CASE j.kind WHEN 'fetch' THEN p_fetch_lease
                                                      ELSE p_export_lease END
              AND j.attempts >= j.max_attempts
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
            ORDER BY j.heartbeat_at
            LIMIT 100
            FOR UPDATE SKIP LOCKED
        ), failed AS (
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = pg_catalog.format(
                    'gave up after %s attempts: the worker holding the job (%s) stopped '
                    'sending heartbeats, so its lease expired each time',
                    j.attempts, j.locked_by)
            WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale))
            RETURNING j.id, j.run_id, j.portal_id, j.kind, j.content_type, j.last_error
        ), told AS (
            INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
            SELECT coalesce(r.owner_id, p.owner_id), f.run_id, 'job_failed',
                   pg_catalog.format('The %s of %s for portal %s failed: %s',
                                     f.kind, f.content_type, f.portal_id, f.last_error),
                   v_now
            FROM failed AS f
            JOIN public.runs AS r ON r.id = f.run_id
            JOIN public.portals AS p ON p.id = f.portal_id
        )
        SELECT array_agg(DISTINCT f.run_id) INTO v_failed_runs FROM failed AS f;
        IF v_failed_runs IS NOT NULL THEN
            PERFORM public.settle_runs(v_failed_runs, v_now);
        END IF;

        -- Expired leases with attempts left first: those jobs have waited longest. The
        -- locking SELECT lives in a CTE so LIMIT bounds exactly the rows locked.
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'running'
              AND j.heartbeat_at < v_now - v_shortest
              AND j.heartbeat_at < v_now - CASE j.kind WHEN 'fetch' THEN p_fetch_lease
                                                      ELSE p_export_lease END
              AND j.attempts < j.max_attempts
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
            ORDER BY j.heartbeat_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE public.jobs AS j
            SET attempts = j.attempts + 1,
                locked_at = v_now,
                locked_by = p_worker,
                heartbeat_at = v_now,
                lease_token = gen_random_uuid()
            WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale))
            RETURNING j
        )
        SELECT coalesce(array_agg(c.j), '{}') INTO v_claimed FROM claimed AS c;

        IF cardinality(v_claimed) < p_limit THEN
            WITH due AS (
                SELECT j.id FROM public.jobs AS j
                WHERE j.status = 'pending'
                  AND j.run_after <= v_now
                  AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
                ORDER BY j.run_after, j.id
                LIMIT p_limit - cardinality(v_claimed)
                FOR UPDATE SKIP LOCKED
            ), claimed AS (
                UPDATE public.jobs AS j
                SET status = 'running',
                    attempts = j.attempts + 1,
                    locked_at = v_now,
                    locked_by = p_worker,
                    heartbeat_at = v_now,
                    lease_token = gen_random_uuid()
                WHERE j.id = ANY (ARRAY(SELECT due.id FROM due))
                RETURNING j
            )
            SELECT coalesce(array_agg(c.j), '{}') INTO v_more FROM claimed AS c;
            v_claimed := v_claimed || v_more;
        END IF;

        IF cardinality(v_claimed) > 0 THEN
            SELECT array_agg(DISTINCT c.run_id) INTO v_run_ids FROM unnest(v_claimed) AS c;
            -- Locked in id order, like settle_runs, so the two cannot deadlock.
            WITH starting AS (
                SELECT r.id FROM public.runs AS r
                WHERE r.id = ANY (v_run_ids) AND r.status = 'pending'
                ORDER BY r.id
                FOR NO KEY UPDATE
            )
            UPDATE public.runs AS r
            SET status = 'running', started_at = coalesce(r.started_at, v_now)
            WHERE r.id = ANY (ARRAY(SELECT starting.id FROM starting));
        END IF;

        RETURN QUERY SELECT * FROM unnest(v_claimed) ORDER BY id;
    END
    $$;

CREATE OR REPLACE FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamptz DEFAULT NULL)
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

CREATE OR REPLACE FUNCTION public.complete_jobs(
    p_job_ids bigint[],
    p_lease_tokens uuid[],
    p_processed bigint[] DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_done public.jobs[];
        v_run_ids bigint[];
    BEGIN
        IF cardinality(p_job_ids) IS DISTINCT FROM cardinality(p_lease_tokens)
           OR (p_processed IS NOT NULL
               AND cardinality(p_processed) IS DISTINCT FROM cardinality(p_job_ids)) THEN
            RAISE EXCEPTION 'complete_jobs: ids, lease tokens and processed counts differ in length'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        WITH done AS (
            UPDATE public.jobs AS j
            SET status = 'completed',
                finished_at = v_now,
                processed = coalesce(given.processed, j.processed)
            FROM unnest(p_job_ids, p_lease_tokens, p_processed)
                 AS given (id, lease_token, processed)
            WHERE j.id = given.id AND j.lease_token = given.lease_token
              AND j.status = 'running'
            RETURNING j
        )
        SELECT coalesce(array_agg(d.j), '{}'), array_agg(DISTINCT (d.j).run_id)
        INTO v_done, v_run_ids
        FROM done AS d;

        IF v_run_ids IS NOT NULL THEN
            PERFORM public.settle_runs(v_run_ids, v_now);
        END IF;
        RETURN QUERY SELECT * FROM unnest(v_done);
    END
    $$;
