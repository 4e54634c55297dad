-- Worker presence: registering, heartbeats, liveness.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- Whether a worker last seen at p_last_seen, heartbeating every p_every, is alive at p_now:
-- three missed heartbeats make it dead (one late heartbeat or a slow query does not).
CREATE OR REPLACE FUNCTION public.worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT p_last_seen > p_now - 3 * p_every $$;
REVOKE ALL ON FUNCTION public.worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Mark the worker p_id seen now, holding jobs p_job_ids; false (nothing changed) unless
-- p_token is the one its registration returned, or when the row is gone (pruned).
CREATE OR REPLACE FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
    BEGIN
        UPDATE public.workers AS w
        SET last_seen_at = greatest(w.last_seen_at, v_now),
            job_ids = coalesce(p_job_ids, '{}')
        WHERE w.id = p_id AND w.token_hash = sha256(convert_to(p_token::text, 'UTF8'));
        RETURN FOUND;
    END
    $$;
REVOKE ALL ON FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone) TO smuves_worker;

CREATE OR REPLACE FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, token uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_token uuid := gen_random_uuid();
        v_id bigint;
    BEGIN
        IF p_kinds IS NULL OR cardinality(p_kinds) = 0
           OR NOT p_kinds <@ ARRAY['fetch', 'export', 'push'] THEN
            RAISE EXCEPTION 'worker_register: kinds must be some of fetch, export, push; got %',
                            p_kinds
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF p_heartbeat_every IS NULL OR p_heartbeat_every < interval '1 second'
           OR p_heartbeat_every > interval '10 minutes' THEN
            RAISE EXCEPTION 'worker_register: heartbeat interval must be 1 s to 10 min, got %',
                p_heartbeat_every
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        -- A day of silence: that process is gone for good; its row would only clutter.
        DELETE FROM public.workers AS w WHERE w.last_seen_at < v_now - interval '1 day';
        INSERT INTO public.workers AS w
            (token_hash, name, host, pid, kinds, concurrency, run_id, heartbeat_every,
             started_at, last_seen_at)
        VALUES (sha256(convert_to(v_token::text, 'UTF8')), p_name, p_host, p_pid,
                ARRAY(SELECT DISTINCT k FROM unnest(p_kinds) AS k ORDER BY k), p_concurrency,
                p_run_id, p_heartbeat_every, v_now, v_now)
        RETURNING w.id INTO v_id;
        RETURN QUERY SELECT v_id, v_token;
    END
    $$;
REVOKE ALL ON FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone) TO smuves_worker;

-- Remove the worker p_id (a graceful stop); false unless p_token is its registration's.
CREATE OR REPLACE FUNCTION public.worker_unregister(p_id bigint, p_token uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        DELETE FROM public.workers AS w
        WHERE w.id = p_id AND w.token_hash = sha256(convert_to(p_token::text, 'UTF8'));
        RETURN FOUND;
    END
    $$;
REVOKE ALL ON FUNCTION public.worker_unregister(p_id bigint, p_token uuid) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.worker_unregister(p_id bigint, p_token uuid) TO smuves_worker;
