-- The job queue (DESIGN §4) as SQL functions. Every state change after a job is created
-- happens here, atomically, fenced by the lease token the claim handed out. A run settles
-- (settle_runs, 0005_queue_runs.sql) in the transaction that finishes its last job.
--
-- Conventions:
-- * SECURITY DEFINER, owned by smuves_owner (whose policies see every row), search_path pinned
--   to pg_catalog and pg_temp, every table schema-qualified, EXECUTE granted to smuves_worker
--   only (0001 revokes it from PUBLIC for every function the owner creates).
-- * Time comes from the database: p_now DEFAULT NULL means now(); tests pass a time instead
--   of sleeping.
-- * A fenced function (heartbeat, checkpoint, complete, fail, park, release) returns the
--   changed job, or no row when the job is no longer running under that lease token: the
--   caller lost its lease and must stop touching the job.
-- * A lease is alive while heartbeat_at (set by the claim, renewed by heartbeat and
--   checkpoint) is younger than the kind's lease (job_lease_expired); the leases are
--   parameters so that the settings, not this file, decide them. A job goes back to pending
--   through job_to_pending, which ends its lease, and the people a run concerns are told
--   through notify_run_owners.
-- * The hot functions (claim_jobs, complete_jobs) run few statements, return rows straight
--   from UPDATE ... RETURNING, and always use their cached generic plans
--   (plan_cache_mode = force_generic_plan): planning these short statements afresh cost more
--   than running them. Each statement is written so that its generic plan is right whatever
--   the parameters: rows are found by primary key, through `= ANY (ARRAY(...))` or a join
--   on the given ids, never by a scan whose size the planner would have to guess.

SET LOCAL ROLE smuves_owner;

-- Rules the functions below share, each written once. The helpers are not SECURITY DEFINER:
-- they run with their callers' rights (the queue functions run as smuves_owner), and nobody
-- else is granted them.

-- Whether job p_job's lease has expired at p_now: it is running and its last sign of life
-- (heartbeat_at) is older than its kind's lease. The comparison with the shorter lease is
-- implied by the one after it, and is there for the planner: it bounds a walk of
-- jobs_lease_idx, which the kind-dependent one cannot. One SQL expression, STABLE (as
-- timestamptz - interval is), no SET, not SECURITY DEFINER: the planner inlines it into the
-- calling statement, which is planned as if the expression were written out there.
CREATE FUNCTION public.job_lease_expired(
    p_job public.jobs, p_now timestamptz, p_fetch_lease interval, p_export_lease interval
)
    RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_job.status = 'running'
           AND p_job.heartbeat_at < p_now - least(p_fetch_lease, p_export_lease)
           AND p_job.heartbeat_at < p_now - CASE p_job.kind WHEN 'fetch' THEN p_fetch_lease
                                                            ELSE p_export_lease END
    $$;

-- A note for the people a run concerns: its owner, or the portal's owner for a run nobody
-- started by hand (a schedule's).
CREATE TYPE public.run_notice AS (run_id bigint, kind text, message text, created_at timestamptz);

-- Store p_notices (in their order) for the people their runs concern. plpgsql rather than
-- sql: an INSERT cannot be inlined, and plpgsql keeps its plan for the session where a sql
-- function would plan it again on every call (runs_notify_settled calls it for every update
-- of runs, most often with nothing to store).
CREATE FUNCTION public.notify_run_owners(p_notices public.run_notice[])
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
        SELECT coalesce(r.owner_id, p.owner_id), n.run_id, n.kind, n.message, n.created_at
        FROM unnest(p_notices) WITH ORDINALITY AS n
        JOIN public.runs AS r ON r.id = n.run_id
        JOIN public.portals AS p ON p.id = r.portal_id
        ORDER BY n.ordinality;
    END
    $$;

-- Store p_job back as pending, without a lease: the one statement that clears locked_at,
-- locked_by, lease_token and heartbeat_at (a retry, a park, a release, an operator's
-- requeue). The caller has locked the job's row and checked its state (a lease it holds, or
-- a finished job), and passes the row with what it changes: run_after, attempts,
-- last_error, cursor, processed. A running job always holds a lease (jobs_running_has_lease
-- of 0002); a pending one never does. Not a trigger on jobs: a BEFORE UPDATE row trigger
-- locks each row before every update of jobs, which adds a WAL record to each heartbeat and
-- completion.
CREATE FUNCTION public.job_to_pending(p_job public.jobs)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        RETURN QUERY
        UPDATE public.jobs AS j
        SET status = 'pending',
            run_after = p_job.run_after,
            attempts = p_job.attempts,
            last_error = p_job.last_error,
            cursor = p_job.cursor,
            processed = p_job.processed,
            finished_at = NULL,
            locked_at = NULL, locked_by = NULL, lease_token = NULL, heartbeat_at = NULL
        WHERE j.id = p_job.id
        RETURNING j.*;
    END
    $$;

-- Claim up to p_limit jobs of p_kinds (NULL: any kind) for worker p_worker, oldest first:
-- running jobs whose lease expired (another attempt), then pending jobs that are due.
-- p_run_id (NULL: every run) limits all of it, expired leases included, to one run's jobs:
-- `smuves sync` works its own run in-process and must not touch other portals' work.
-- Each claimed job becomes running with a fresh lease token and attempts + 1; its run
-- becomes running if it was pending. Expired jobs already at max_attempts fail instead, with
-- a reason and a notification to the run's owner (the portal's owner for runs nobody started
-- by hand), and their runs are settled.
CREATE FUNCTION public.claim_jobs(
    p_worker text,
    p_kinds text[],
    p_limit integer,
    p_fetch_lease interval DEFAULT '5 minutes',
    p_export_lease interval DEFAULT '2 minutes',
    p_now timestamptz DEFAULT NULL,
    p_run_id bigint DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_failed_runs bigint[];
        v_notices public.run_notice[];
    BEGIN
        IF p_limit IS NULL OR p_limit < 1 THEN
            RAISE EXCEPTION 'claim_jobs: p_limit must be at least 1, got %', p_limit
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        -- Leases rarely expire: one probe of jobs_lease_idx says whether any did.
        IF EXISTS (SELECT FROM public.jobs AS j
                   WHERE public.job_lease_expired(j, v_now, p_fetch_lease, p_export_lease)
                     AND (p_run_id IS NULL OR j.run_id = p_run_id)) THEN
            WITH stale AS (
                SELECT j.id FROM public.jobs AS j
                WHERE public.job_lease_expired(j, v_now, p_fetch_lease, p_export_lease)
                  AND j.attempts >= j.max_attempts
                  AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
                  AND (p_run_id IS NULL OR j.run_id = p_run_id)
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
            )
            SELECT array_agg(DISTINCT f.run_id),
                   array_agg(ROW(f.run_id, 'job_failed',
                                 pg_catalog.format('The %s of %s for portal %s failed: %s',
                                                   f.kind, f.content_type, f.portal_id,
                                                   f.last_error),
                                 v_now)::public.run_notice ORDER BY f.id)
            INTO v_failed_runs, v_notices
            FROM failed AS f;
            IF v_failed_runs IS NOT NULL THEN
                PERFORM public.notify_run_owners(v_notices);
                PERFORM public.settle_runs(v_failed_runs, v_now);
            END IF;
        END IF;

        -- One statement: expired leases with attempts left first (those jobs have waited
        -- longest), then due pending jobs; each locking SELECT lives in a CTE so that LIMIT
        -- bounds exactly the rows locked. The runs that start are locked in id order, like
        -- settle_runs locks them, so that the two cannot deadlock.
        RETURN QUERY
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE public.job_lease_expired(j, v_now, p_fetch_lease, p_export_lease)
              AND j.attempts < j.max_attempts
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
            ORDER BY j.heartbeat_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ), due AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'pending'
              AND j.run_after <= v_now
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
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

-- The seeds' name: claim at most one job.
CREATE FUNCTION public.claim_next_job(
    p_worker text,
    p_kinds text[],
    p_fetch_lease interval DEFAULT '5 minutes',
    p_export_lease interval DEFAULT '2 minutes',
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT * FROM public.claim_jobs(p_worker, p_kinds, 1, p_fetch_lease, p_export_lease, p_now)
    $$;

-- Extend the lease of a long job.
CREATE FUNCTION public.heartbeat_job(
    p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        UPDATE public.jobs AS j
        SET heartbeat_at = coalesce(p_now, now())
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;

-- Record how far a job got (resume point and progress) and extend its lease.
CREATE FUNCTION public.checkpoint_job(
    p_job_id bigint,
    p_lease_token uuid,
    p_cursor text,
    p_processed bigint,
    p_total bigint DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        UPDATE public.jobs AS j
        SET cursor = p_cursor,
            processed = p_processed,
            total = coalesce(p_total, j.total),
            heartbeat_at = coalesce(p_now, now())
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;

-- Finish jobs successfully (a batch: pairs of ids and lease tokens, optional processed
-- counts), then settle their runs, each run once for the whole batch. The lease columns are
-- kept as a record of who ran the job.
CREATE FUNCTION public.complete_jobs(
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
        v_done bigint;
    BEGIN
        IF cardinality(p_job_ids) IS DISTINCT FROM cardinality(p_lease_tokens)
           OR (p_processed IS NOT NULL
               AND cardinality(p_processed) IS DISTINCT FROM cardinality(p_job_ids)) THEN
            RAISE EXCEPTION 'complete_jobs: ids, lease tokens and processed counts differ in length'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        RETURN QUERY
        UPDATE public.jobs AS j
        SET status = 'completed',
            finished_at = v_now,
            processed = coalesce(given.processed, j.processed)
        FROM unnest(p_job_ids, p_lease_tokens, p_processed) AS given (id, lease_token, processed)
        WHERE j.id = given.id AND j.lease_token = given.lease_token
          AND j.status = 'running'
        RETURNING j.*;
        GET DIAGNOSTICS v_done = ROW_COUNT;

        IF v_done > 0 THEN
            PERFORM public.settle_runs(
                ARRAY(SELECT DISTINCT j.run_id FROM public.jobs AS j
                      WHERE j.id = ANY (p_job_ids) AND j.status = 'completed'),
                v_now);
        END IF;
    END
    $$;

CREATE FUNCTION public.complete_job(
    p_job_id bigint,
    p_lease_token uuid,
    p_processed bigint DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT * FROM public.complete_jobs(
            ARRAY[p_job_id], ARRAY[p_lease_token], ARRAY[p_processed], p_now)
    $$;

-- Record a failure. Retryable, with attempts left: back to pending, due after
--   delay = least(p_backoff_base * 2^(attempts - 1), p_backoff_max)
--   run_after = now + delay + random() * p_jitter_ratio * delay
-- Otherwise (permanent, or out of attempts): failed at once, the owner is notified, and the
-- run is settled if this was its last open job. The error text is kept (truncated).
CREATE FUNCTION public.fail_job(
    p_job_id bigint,
    p_lease_token uuid,
    p_error text,
    p_retryable boolean,
    p_backoff_base interval DEFAULT '10 seconds',
    p_backoff_max interval DEFAULT '10 minutes',
    p_jitter_ratio double precision DEFAULT 0.1,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_job public.jobs;
        v_delay interval;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;

        IF p_retryable AND v_job.attempts < v_job.max_attempts THEN
            v_delay := least(p_backoff_base * power(2, greatest(v_job.attempts, 1) - 1),
                             p_backoff_max);
            v_job.run_after := v_now + v_delay + v_delay * (random() * p_jitter_ratio);
            v_job.last_error := left(p_error, 2000);
            SELECT * INTO v_job FROM public.job_to_pending(v_job);
        ELSE
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = left(p_error, 2000)
            WHERE j.id = p_job_id
            RETURNING j.* INTO v_job;

            PERFORM public.notify_run_owners(ARRAY[ROW(
                v_job.run_id, 'job_failed',
                pg_catalog.format('The %s of %s for portal %s failed after %s attempt(s): %s',
                                  v_job.kind, v_job.content_type, v_job.portal_id,
                                  v_job.attempts, left(p_error, 500)),
                v_now)::public.run_notice]);

            PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
        END IF;
        RETURN NEXT v_job;
    END
    $$;

-- Put a job back until p_until without spending the attempt it was claimed with (a rate
-- limit such as HubSpot's daily budget is a wait, not a failure). The cursor is kept.
CREATE FUNCTION public.park_job(
    p_job_id bigint,
    p_lease_token uuid,
    p_until timestamptz,
    p_reason text,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_job public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        v_job.run_after := greatest(p_until, coalesce(p_now, now()));
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        v_job.last_error := left(p_reason, 2000);
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
    END
    $$;

-- Hand a job back now (graceful shutdown) without spending its attempt; the cursor is kept
-- so the next worker resumes where this one stopped, and idle workers are woken.
CREATE FUNCTION public.release_job(
    p_job_id bigint, p_lease_token uuid, p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_job public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        v_job.run_after := coalesce(p_now, now());
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
        PERFORM pg_catalog.pg_notify('smuves_jobs', v_job.kind);
    END
    $$;

-- A portal's encrypted token, only for a worker that holds the live lease of one of that
-- portal's jobs (the job is running under p_lease_token: nobody has taken it over).
-- No row: no such lease. A row with a NULL token: the portal has no token stored.
CREATE FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid)
    RETURNS TABLE (portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT p.id, p.token_encrypted
        FROM public.jobs AS j JOIN public.portals AS p ON p.id = j.portal_id
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
    $$;

-- Wake-ups: one NOTIFY per inserting statement and job kind (payload: the kind). A hint
-- only; workers also poll.
CREATE FUNCTION public.jobs_notify_inserted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        PERFORM pg_catalog.pg_notify('smuves_jobs', k.kind)
        FROM (SELECT DISTINCT i.kind FROM inserted AS i WHERE i.status = 'pending') AS k;
        RETURN NULL;
    END
    $$;
CREATE TRIGGER jobs_notify_inserted AFTER INSERT ON public.jobs
    REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION public.jobs_notify_inserted();

GRANT EXECUTE ON FUNCTION
    public.claim_jobs(text, text[], integer, interval, interval, timestamptz, bigint),
    public.claim_next_job(text, text[], interval, interval, timestamptz),
    public.heartbeat_job(bigint, uuid, timestamptz),
    public.checkpoint_job(bigint, uuid, text, bigint, bigint, timestamptz),
    public.complete_jobs(bigint[], uuid[], bigint[], timestamptz),
    public.complete_job(bigint, uuid, bigint, timestamptz),
    public.fail_job(bigint, uuid, text, boolean, interval, interval, double precision, timestamptz),
    public.park_job(bigint, uuid, timestamptz, text, timestamptz),
    public.release_job(bigint, uuid, timestamptz),
    public.portal_token(bigint, uuid)
TO smuves_worker;
