-- scripts/bench_queue.py: the claim and the completion as they were before fair claims
-- (claim_jobs oldest first; complete_jobs; settle_runs counting every job), measured beside today's in the
-- same run. Created in the benchmark's scratch database only, never by a migration.

-- name: bench_fifo_functions
CREATE FUNCTION public.bench_claim_fifo(p_worker text, p_kinds text[], p_limit integer)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := now();
        p_fetch_lease interval := '5 minutes';
        p_export_lease interval := '2 minutes';
        p_push_lease interval := '2 minutes';
    BEGIN
        -- the first claim's probe of expired leases (none expire in the benchmark)
        IF EXISTS (SELECT FROM public.jobs AS j
                   WHERE public.job_lease_expired(j, v_now, p_fetch_lease, p_export_lease, p_push_lease)) THEN
            RAISE EXCEPTION 'bench_claim_fifo: an expired lease';
        END IF;

        RETURN QUERY
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE public.job_lease_expired(j, v_now, p_fetch_lease, p_export_lease, p_push_lease)
              AND j.attempts < j.max_attempts
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
            ORDER BY j.heartbeat_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ), due AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'pending'
              AND j.run_after <= v_now
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
            ORDER BY j.run_after, j.id
            LIMIT p_limit - (SELECT count(*) FROM stale)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            UPDATE public.jobs AS j
            SET status = 'running',
                attempts = j.attempts + 1,
                locked_at = v_now,
                locked_by = p_worker,
                heartbeat_at = v_now,
                lease_token = gen_random_uuid()
            WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale UNION ALL SELECT due.id FROM due))
            RETURNING j.*
        ), starting AS (
            SELECT r.id FROM public.runs AS r
            WHERE r.id = ANY (ARRAY(SELECT claimed.run_id FROM claimed))
              AND r.status = 'pending'
            ORDER BY r.id
            FOR NO KEY UPDATE
        ), started AS (
            UPDATE public.runs AS r
            SET status = 'running', started_at = coalesce(r.started_at, v_now)
            WHERE r.id = ANY (ARRAY(SELECT starting.id FROM starting)) AND r.status = 'pending'
        )
        SELECT * FROM claimed ORDER BY claimed.id;
    END
    $$;

-- The first settle_runs: every run of the batch locked, then all its jobs counted.
CREATE FUNCTION public.bench_settle_fifo(p_run_ids bigint[], p_now timestamptz)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
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
            started_at = coalesce(r.started_at, p_now),
            finished_at = p_now
        FROM counts AS c
        WHERE r.id = c.run_id AND c.open = 0 AND r.status IN ('pending', 'running')
        RETURNING r.*;
    END
    $$;

CREATE FUNCTION public.bench_complete_fifo(p_job_ids bigint[], p_lease_tokens uuid[])
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := now();
        v_done bigint;
    BEGIN
        RETURN QUERY
        UPDATE public.jobs AS j
        SET status = 'completed', finished_at = v_now
        FROM unnest(p_job_ids, p_lease_tokens) AS given (id, lease_token)
        WHERE j.id = given.id AND j.lease_token = given.lease_token
          AND j.status = 'running'
        RETURNING j.*;
        GET DIAGNOSTICS v_done = ROW_COUNT;

        IF v_done > 0 THEN
            PERFORM public.bench_settle_fifo(
                ARRAY(SELECT DISTINCT j.run_id FROM public.jobs AS j
                      WHERE j.id = ANY (p_job_ids) AND j.status = 'completed'),
                v_now);
        END IF;
    END
    $$;

GRANT EXECUTE ON FUNCTION public.bench_claim_fifo(text, text[], integer),
                          public.bench_complete_fifo(bigint[], uuid[])
TO smuves_worker;

-- name: bench_fifo_claim
SELECT * FROM public.bench_claim_fifo(%(worker)s, %(kinds)s::text[], %(limit)s)

-- name: bench_fifo_complete
SELECT id FROM public.bench_complete_fifo(%(job_ids)b::bigint[], %(lease_tokens)b::uuid[])
