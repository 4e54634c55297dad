-- Which workers are alive: each worker process registers a row, heartbeats it and removes it
-- when it stops, so an operator can tell a run that waits for a free slot from a run that
-- waits for a worker nobody started.
--
-- Table:
--   workers  one row per worker process: its name in jobs.locked_by, host, pid, kinds,
--            concurrency, the one run it works (`smuves sync`'s own worker) or NULL for any,
--            how often it heartbeats, when it started and was last seen, the jobs it held
--            then. Only the owner and the login role read it (dashboard, `smuves stats`).
--
-- Functions (SECURITY DEFINER for smuves_worker; time from the database, see effective_now):
--   worker_register    a new row; returns its id and a random token, whose sha256 alone is
--                      stored. Also forgets rows not seen for a day.
--   worker_heartbeat   last_seen_at and jobs in hand of the row with that id and token
--   worker_unregister  deletes the row with that id and token
--   worker_alive       the one rule of liveness: seen within three heartbeat intervals
--   metrics_workers_live  how many are alive, for /metrics (smuves_app: a count only)
--
-- Why a token and not pg_backend_pid: a worker talks through a pool, so its calls come from
-- several backends, and every backend changes when the database restarts. Every worker logs
-- in as the same role, so the role cannot tell them apart either. The token is known only to
-- the process that registered (returned once, never readable back: the row keeps its hash),
-- so a worker login that names another row's id changes nothing.

SET LOCAL ROLE smuves_owner;

CREATE TABLE public.workers (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- sha256 of the token worker_register returned: never the token
    token_hash       bytea NOT NULL
                     CONSTRAINT workers_token_hash_sha256 CHECK (octet_length(token_hash) = 32),
    -- what the worker writes in jobs.locked_by (`host:pid`, or SMUVES_WORKER_ID:pid)
    name             text NOT NULL
                     CONSTRAINT workers_name_sensible CHECK (length(name) BETWEEN 1 AND 200),
    host             text NOT NULL
                     CONSTRAINT workers_host_sensible CHECK (length(host) BETWEEN 1 AND 255),
    pid              integer NOT NULL CONSTRAINT workers_pid_positive CHECK (pid > 0),
    kinds            text[] NOT NULL
                     CONSTRAINT workers_kinds_known
                     CHECK (cardinality(kinds) > 0 AND kinds <@ ARRAY['fetch', 'export']),
    concurrency      integer NOT NULL
                     CONSTRAINT workers_concurrency_sensible CHECK (concurrency BETWEEN 1 AND 10000),
    -- the only run this worker claims from (`smuves sync`'s own worker); NULL: any run
    run_id           bigint,
    heartbeat_every  interval NOT NULL
                     CONSTRAINT workers_heartbeat_sensible
                     CHECK (heartbeat_every BETWEEN interval '1 second' AND interval '10 minutes'),
    started_at       timestamptz NOT NULL,
    last_seen_at     timestamptz NOT NULL,
    -- the jobs it was working at its last heartbeat
    job_ids          bigint[] NOT NULL DEFAULT '{}'
);
-- worker_register forgets the long silent ones: a range of this index.
CREATE INDEX workers_last_seen_idx ON public.workers (last_seen_at);

ALTER TABLE public.workers ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.workers FORCE ROW LEVEL SECURITY;
CREATE POLICY workers_owner_all ON public.workers TO smuves_owner USING (true) WITH CHECK (true);

-- Whether a worker last seen at p_last_seen, heartbeating every p_every, is alive at p_now:
-- three missed heartbeats make it dead (one late heartbeat or a slow query does not).
CREATE FUNCTION public.worker_alive(p_last_seen timestamptz, p_every interval, p_now timestamptz)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT p_last_seen > p_now - 3 * p_every $$;

CREATE FUNCTION public.worker_register(
    p_name text,
    p_host text,
    p_pid integer,
    p_kinds text[],
    p_concurrency integer,
    p_run_id bigint,
    p_heartbeat_every interval,
    p_now timestamptz DEFAULT NULL
)
    RETURNS TABLE (id bigint, token uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_token uuid := gen_random_uuid();
        v_id bigint;
    BEGIN
        IF p_kinds IS NULL OR cardinality(p_kinds) = 0
           OR NOT p_kinds <@ ARRAY['fetch', 'export'] THEN
            RAISE EXCEPTION 'worker_register: kinds must be some of fetch, export; got %', p_kinds
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

-- Mark the worker p_id seen now, holding jobs p_job_ids; false (nothing changed) unless
-- p_token is the one its registration returned, or when the row is gone (pruned).
CREATE FUNCTION public.worker_heartbeat(
    p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamptz DEFAULT NULL
)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
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

-- Remove the worker p_id (a graceful stop); false unless p_token is its registration's.
CREATE FUNCTION public.worker_unregister(p_id bigint, p_token uuid)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        DELETE FROM public.workers AS w
        WHERE w.id = p_id AND w.token_hash = sha256(convert_to(p_token::text, 'UTF8'));
        RETURN FOUND;
    END
    $$;

-- How many workers are alive at p_now (only the operator's login may pass a time).
CREATE FUNCTION public.metrics_workers_live(p_now timestamptz DEFAULT NULL)
    RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT count(*) FROM public.workers AS w
        WHERE public.worker_alive(w.last_seen_at, w.heartbeat_every, public.effective_now(p_now))
    $$;

REVOKE EXECUTE ON FUNCTION
    public.worker_register(text, text, integer, text[], integer, bigint, interval, timestamptz),
    public.worker_heartbeat(bigint, uuid, bigint[], timestamptz),
    public.worker_unregister(bigint, uuid),
    public.metrics_workers_live(timestamptz)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    public.worker_register(text, text, integer, text[], integer, bigint, interval, timestamptz),
    public.worker_heartbeat(bigint, uuid, bigint[], timestamptz),
    public.worker_unregister(bigint, uuid)
TO smuves_worker;
GRANT EXECUTE ON FUNCTION public.metrics_workers_live(timestamptz) TO smuves_app;
