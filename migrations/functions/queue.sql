-- The job queue: enqueue, claim, heartbeat, checkpoint, complete, fail, park, release, requeue,
-- and the triggers on jobs.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

-- Lock order. A transaction locks job rows first, in claim order (priority DESC, fair_at, id),
-- and runs last, in id order, in one pass. The claim's FOR UPDATE SKIP LOCKED does not skip
-- everything: a job it saw pending that has since been claimed and is now being completed is
-- waited for (Postgres follows the row's newer versions and waits for their writer). So
-- complete_jobs locks its batch in claim order, the order a claim meets them, and
-- complete-and-claim (one transaction) completes without settling, then claims and settles
-- the finished batch's runs in the claim's one pass over runs: a transaction that waits for a
-- job row never holds a run another one needs.
--
-- Planning: claim_jobs and complete_jobs run generic plans (their cost must not depend on
-- the arguments' values) with JIT off. A generic plan's estimate grows with the jobs table,
-- not with the batch: past jit_above_cost, at a backlog of some 100,000 jobs, every claim
-- spent about 200 ms compiling expressions for a statement that runs in 2 ms.
--
-- Leases: how long a claimed job's lease lasts, per kind, is job_leases', never the caller's
-- (a worker passing a lease of a second would take over every other worker's jobs with their
-- portals' tokens). Operators change a lease with
-- `UPDATE job_leases SET lease = '10 minutes' WHERE kind = 'fetch'`.

SET LOCAL ROLE smuves_owner;

-- Record how far a job got (resume point and progress) and extend its lease.
CREATE OR REPLACE FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        UPDATE public.jobs AS j
        SET cursor = p_cursor,
            processed = p_processed,
            total = coalesce(p_total, j.total),
            heartbeat_at = public.effective_now(p_now)
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;
REVOKE ALL ON FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone) TO smuves_worker;

-- Claim up to p_limit jobs of p_kinds (NULL: any kind) for worker p_worker: running jobs whose
-- lease expired first (another attempt; at max_attempts they fail instead), then due pending
-- jobs in line: priority, then fair_at, then id. A fetch job is passed over while its portal
-- has p_portal_max_running fetch jobs running or ahead of it in line (with p_run_id: ahead of
-- it in that run), so one statement never claims more than the cap of a portal, and
-- concurrent claims only fewer (a job ahead that another claim is taking counts). p_run_id
-- (NULL: every run) limits it all to one run's jobs (`smuves sync`). The leases are
-- job_leases'. Claimed jobs are returned in id order. p_settle_run_ids: runs to settle
-- afterwards, locked with the runs the claim starts, in one pass in id order (the runs of a
-- batch complete_jobs finished without settling, in this transaction), then settled by
-- settle_locked_runs without locking them again. Written so that its cost grows with the
-- batch rather than its square (README "Sharing the workers among portals").
CREATE OR REPLACE FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_run_id bigint DEFAULT NULL::bigint, p_portal_max_running integer DEFAULT 5, p_settle_run_ids bigint[] DEFAULT NULL::bigint[]) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_fetch_lease interval;
        v_export_lease interval;
        v_push_lease interval;
        v_failed_runs bigint[];
        v_settle bigint[] := p_settle_run_ids;
        v_notices public.run_notice[];
    BEGIN
        IF p_limit IS NULL OR p_limit < 1 THEN
            RAISE EXCEPTION 'claim_jobs: p_limit must be at least 1, got %', p_limit
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF p_portal_max_running IS NULL OR p_portal_max_running < 1 THEN
            RAISE EXCEPTION 'claim_jobs: p_portal_max_running must be at least 1, got %',
                            p_portal_max_running
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        SELECT max(l.lease) FILTER (WHERE l.kind = 'fetch'),
               max(l.lease) FILTER (WHERE l.kind = 'export'),
               max(l.lease) FILTER (WHERE l.kind = 'push')
        INTO v_fetch_lease, v_export_lease, v_push_lease
        FROM public.job_leases AS l;

        -- Leases rarely expire: one probe of jobs_lease_idx says whether any did.
        IF EXISTS (SELECT FROM public.jobs AS j
                   WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
                     AND (p_run_id IS NULL OR j.run_id = p_run_id)) THEN
            WITH stale AS (
                SELECT j.id FROM public.jobs AS j
                WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
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
                        j.attempts, j.locked_by),
                    last_error_public = pg_catalog.format(
                        'gave up after %s attempts: the worker running it stopped responding '
                        'each time', j.attempts)
                WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale))
                RETURNING j.id, j.run_id, j.portal_id, j.kind, j.content_type,
                          j.last_error_public
            )
            SELECT array_agg(DISTINCT f.run_id),
                   array_agg(ROW(f.run_id, 'job_failed',
                                 pg_catalog.format('The %s of %s for portal %s failed: %s',
                                                   f.kind, f.content_type, f.portal_id,
                                                   f.last_error_public),
                                 v_now)::public.run_notice ORDER BY f.id)
            INTO v_failed_runs, v_notices
            FROM failed AS f;
            IF v_failed_runs IS NOT NULL THEN
                PERFORM public.notify_run_owners(v_notices);
                -- settled after the claim: runs are locked last
                v_settle := v_settle || v_failed_runs;
            END IF;
        END IF;

        RETURN QUERY
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
              AND j.attempts < j.max_attempts
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
            ORDER BY j.heartbeat_at
            LIMIT p_limit
            FOR UPDATE SKIP LOCKED
        ), due AS (
            -- A row another transaction holds (xmax set) goes to the lock unchecked: its
            -- holder is almost always a claim or completion in progress, and SKIP LOCKED skips
            -- it, so claims walking the same head of the line do not look up the portals of
            -- each other's rows. One whose holder had finished is checked by the update.
            SELECT j.id, j.xmax <> '0'::xid AS unchecked FROM public.jobs AS j
            WHERE j.status = 'pending'
              AND j.run_after <= v_now
              AND (p_kinds IS NULL OR j.kind = ANY (p_kinds))
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
              AND (j.kind <> 'fetch' OR j.xmax <> '0'::xid
                   OR (SELECT * FROM public.job_within_portal_cap(
                           j.portal_id, j.id, j.priority, coalesce(j.fair_at, j.run_after),
                           v_now, p_run_id, p_portal_max_running)))
            ORDER BY j.priority DESC, coalesce(j.fair_at, j.run_after), j.id
            LIMIT p_limit - (SELECT count(*) FROM stale)
            FOR UPDATE SKIP LOCKED
        ), claimed AS (
            -- the ids an index condition; the few unchecked ones a hashed NOT IN
            UPDATE public.jobs AS j
            SET status = 'running',
                attempts = j.attempts + 1,
                locked_at = v_now,
                locked_by = p_worker,
                heartbeat_at = v_now,
                lease_token = gen_random_uuid()
            WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale UNION ALL SELECT due.id FROM due))
              AND (j.kind <> 'fetch'
                   OR j.id NOT IN (SELECT due.id FROM due WHERE due.unchecked)
                   OR (SELECT * FROM public.job_within_portal_cap(
                           j.portal_id, j.id, j.priority, coalesce(j.fair_at, j.run_after),
                           v_now, p_run_id, p_portal_max_running)))
            RETURNING j.*
        ), locked_runs AS (
            -- the runs that start and the runs to settle, in one pass in id order; a run to
            -- settle with a job claimed here cannot finish (that job is running), so it is
            -- neither locked nor settled
            SELECT r.id, r.status FROM public.runs AS r
            WHERE r.id = ANY (ARRAY(SELECT claimed.run_id FROM claimed
                                    UNION ALL SELECT s.id FROM unnest(v_settle) AS s (id)))
              AND ((r.status = 'pending' AND r.id IN (SELECT claimed.run_id FROM claimed))
                   OR (r.status IN ('pending', 'running')
                       AND r.id IN (SELECT s.id FROM unnest(v_settle) AS s (id))
                       AND r.id NOT IN (SELECT claimed.run_id FROM claimed)))
            ORDER BY r.id
            FOR NO KEY UPDATE
        ), started AS (
            UPDATE public.runs AS r
            SET status = 'running', started_at = coalesce(r.started_at, v_now)
            WHERE r.id = ANY (ARRAY(SELECT locked_runs.id FROM locked_runs
                                    WHERE locked_runs.status = 'pending'))
              AND r.id IN (SELECT claimed.run_id FROM claimed)
              AND r.status = 'pending'
        )
        -- returned as the statement makes them: gathered into a jobs[] first, each row went
        -- through text (the CTE's row type is not jobs), a tenth of a batch's claim. A SELECT
        -- in WITH runs only as far as it is read, and started, its other reader, joins it to
        -- claimed: a claim that took no job would never read it, and would settle the runs
        -- without their locks (two workers finishing a run's last jobs at once would each
        -- count the other's as running). Counted here, whole, before claimed is returned, it
        -- locks them whatever was claimed.
        SELECT * FROM claimed
        WHERE (SELECT count(*) FROM locked_runs) >= 0
        ORDER BY claimed.id;

        IF v_settle IS NOT NULL THEN
            -- locked by the claim's pass over runs above, but for those with a claimed job,
            -- which cannot settle (that job is running: settle_locked_runs passes them over)
            PERFORM public.settle_locked_runs(v_settle, v_now);
        END IF;
    END
    $$;
REVOKE ALL ON FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]) TO smuves_worker;

-- Claim at most one job: claim_jobs with a limit of one.
CREATE OR REPLACE FUNCTION public.claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_portal_max_running integer DEFAULT 5) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT * FROM public.claim_jobs(p_worker, p_kinds, 1, p_now, NULL,
                                           p_portal_max_running)
    $$;
REVOKE ALL ON FUNCTION public.claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone, p_portal_max_running integer) FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE FUNCTION public.complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT * FROM public.complete_jobs(
            ARRAY[p_job_id], ARRAY[p_lease_token], ARRAY[p_processed], p_now)
    $$;
REVOKE ALL ON FUNCTION public.complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Complete a batch of leased jobs, locked in claim order (job rows in id order, then their
-- runs), updating the rows where they were locked, and without settling their runs when
-- p_settle is false: the caller settles them in the same transaction (claim_jobs'
-- p_settle_run_ids). Returns the jobs completed. One job (a worker with one slot, complete_job)
-- takes the short way: one row has no order to lock in, and the run to settle is its own.
CREATE OR REPLACE FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[] DEFAULT NULL::bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_settle boolean DEFAULT true) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_done bigint;
        v_job public.jobs;
    BEGIN
        IF cardinality(p_job_ids) IS DISTINCT FROM cardinality(p_lease_tokens)
           OR (p_processed IS NOT NULL
               AND cardinality(p_processed) IS DISTINCT FROM cardinality(p_job_ids)) THEN
            RAISE EXCEPTION 'complete_jobs: ids, lease tokens and processed counts differ in length'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        IF cardinality(p_job_ids) = 1 THEN
            UPDATE public.jobs AS j
            SET status = 'completed',
                finished_at = v_now,
                processed = coalesce(p_processed[1], j.processed)
            WHERE j.id = p_job_ids[1] AND j.lease_token = p_lease_tokens[1]
              AND j.status = 'running'
            RETURNING j.* INTO v_job;
            IF FOUND THEN
                RETURN NEXT v_job;
                IF p_settle THEN
                    PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
                END IF;
            END IF;
            RETURN;
        END IF;

        RETURN QUERY
        WITH mine AS (
            SELECT j.ctid AS row_at, given.processed
            FROM unnest(p_job_ids, p_lease_tokens, p_processed)
                     AS given (id, lease_token, processed)
            JOIN public.jobs AS j ON j.id = given.id AND j.lease_token = given.lease_token
            WHERE j.status = 'running'
            ORDER BY j.priority DESC, coalesce(j.fair_at, j.run_after), j.id
            FOR NO KEY UPDATE OF j
        )
        UPDATE public.jobs AS j
        SET status = 'completed',
            finished_at = v_now,
            processed = coalesce(mine.processed, j.processed)
        FROM mine
        WHERE j.ctid = mine.row_at AND j.status = 'running'
        RETURNING j.*;
        GET DIAGNOSTICS v_done = ROW_COUNT;

        IF v_done > 0 AND p_settle THEN
            PERFORM public.settle_runs(
                ARRAY(SELECT DISTINCT j.run_id FROM public.jobs AS j
                      WHERE j.id = ANY (p_job_ids) AND j.status = 'completed'),
                v_now);
        END IF;
    END
    $$;
REVOKE ALL ON FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean) TO smuves_worker;

-- Add a job of p_content_type to run p_run_id, with a priority, placed in line (fair_at) by
-- its portal's and its owner's jobs in flight. The priority is capped by the login: a
-- worker's jobs (a schedule's fetch, p_schedule_id) at 0, the API's at 20; the operator's
-- login may set any. The API may add jobs only to the runs of the portals it may change
-- (editor_portal_ids); a viewer is told so.
CREATE OR REPLACE FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint DEFAULT 0, p_max_attempts integer DEFAULT 3, p_run_after timestamp with time zone DEFAULT NULL::timestamp with time zone, p_total bigint DEFAULT NULL::bigint, p_idempotency_key text DEFAULT NULL::text, p_schedule_id bigint DEFAULT NULL::bigint) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_run public.runs;
        v_operator boolean := public.operator_session();
        v_run_after timestamptz := coalesce(p_run_after, now());
        v_priority smallint := coalesce(p_priority, 0);
        v_ahead bigint;
        v_busy bigint;
    BEGIN
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF NOT v_operator THEN
            v_run_after := greatest(v_run_after, now());
            IF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
               AND v_run.portal_id IN (SELECT public.editor_portal_ids()) THEN
                v_priority := least(v_priority, 20);
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
                  AND v_run.portal_id IN (SELECT public.member_portal_ids()) THEN
                RAISE EXCEPTION 'enqueue_job: only the owners and editors of portal % may start '
                                'its fetches and exports; a viewer may only read',
                                v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_worker', 'USAGE')
                  AND v_run.kind = 'fetch'
                  AND EXISTS (SELECT FROM public.schedules AS s
                              WHERE s.id = p_schedule_id
                                AND s.portal_id = v_run.portal_id
                                AND s.enabled
                                AND s.next_run_at <= now()
                                AND s.owner_id IS NOT DISTINCT FROM v_run.owner_id
                                AND p_content_type = ANY (s.content_types::text[])) THEN
                v_priority := least(v_priority, 0);
            ELSE
                RAISE EXCEPTION 'enqueue_job: this login may not add jobs to run % of portal %',
                                p_run_id, v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
        END IF;

        -- The portal's jobs in flight: a walk of jobs_in_flight_uniq, a few rows at most.
        SELECT count(*) INTO v_ahead FROM public.jobs AS j
        WHERE j.portal_id = v_run.portal_id AND j.status IN ('pending', 'running');
        -- The owner's busy portals, this one included: portals_owner_idx, then a probe of
        -- jobs_in_flight_uniq per portal of the owner.
        SELECT count(*) INTO v_busy FROM public.portals AS p
        WHERE p.owner_id = (SELECT o.owner_id FROM public.portals AS o
                            WHERE o.id = v_run.portal_id)
          AND (p.id = v_run.portal_id
               OR EXISTS (SELECT FROM public.jobs AS b
                          WHERE b.portal_id = p.id AND b.status IN ('pending', 'running')));

        RETURN QUERY
        INSERT INTO public.jobs AS j (run_id, portal_id, kind, content_type, max_attempts,
                                      run_after, total, idempotency_key, priority, fair_at)
        VALUES (v_run.id, v_run.portal_id, v_run.kind, p_content_type, p_max_attempts,
                v_run_after, p_total, p_idempotency_key, v_priority,
                v_run_after + (v_ahead * v_busy + v_busy - 1) * interval '10 seconds')
        ON CONFLICT DO NOTHING
        RETURNING j.*;
    END
    $$;
REVOKE ALL ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) TO smuves_app;
GRANT EXECUTE ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) TO smuves_worker;

-- An export row mirrors its job: pending, running, completed, failed, stopped.
CREATE OR REPLACE FUNCTION public.exports_follow_job() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        UPDATE public.exports AS e
        SET status = NEW.status,
            finished_at = CASE WHEN NEW.status IN ('completed', 'failed', 'stopped')
                               THEN coalesce(NEW.finished_at, now()) END
        WHERE e.run_id = NEW.run_id AND e.content_type = NEW.content_type;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.exports_follow_job() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER jobs_exports_follow AFTER UPDATE OF status ON public.jobs FOR EACH ROW WHEN ((((new.kind)::text = 'export'::text) AND ((old.status)::text IS DISTINCT FROM (new.status)::text))) EXECUTE FUNCTION public.exports_follow_job();

-- Record a failure (fail_job of the queue): as before, without a note of its own.
CREATE OR REPLACE FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval DEFAULT '00:00:10'::interval, p_backoff_max interval DEFAULT '00:10:00'::interval, p_jitter_ratio double precision DEFAULT 0.1, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_error_public text DEFAULT NULL::text) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_job public.jobs;
        v_delay interval;
        v_public text := left(coalesce(p_error_public, 'failed; the operators have the details'),
                              2000);
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
            v_job.last_error_public := v_public;
            SELECT * INTO v_job FROM public.job_to_pending(v_job);
        ELSE
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = left(p_error, 2000),
                last_error_public = v_public
            WHERE j.id = p_job_id
            RETURNING j.* INTO v_job;

            PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
        END IF;
        RETURN NEXT v_job;
    END
    $$;
REVOKE ALL ON FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text) TO smuves_worker;

CREATE OR REPLACE FUNCTION public.fetch_seen_forget_deleted_jobs() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s WHERE s.job_id IN (SELECT o.id FROM old_jobs AS o);
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.fetch_seen_forget_deleted_jobs() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER jobs_fetch_seen_forget_deleted AFTER DELETE ON public.jobs REFERENCING OLD TABLE AS old_jobs FOR EACH STATEMENT EXECUTE FUNCTION public.fetch_seen_forget_deleted_jobs();

-- What a fetch job saw is forgotten when the job finishes (completed, failed or stopped), by
-- whatever statement finishes it. Once per statement, over its transition tables: a row
-- trigger called a function for every fetch job a batch completed. A statement that finishes
-- no job (a claim, a heartbeat, a checkpoint) finds none to forget. It fires for every update
-- of jobs, which only the queue's functions (as their owner) and the operators make: no
-- SECURITY DEFINER and no SET clause to switch on each of them.
CREATE OR REPLACE FUNCTION public.fetch_seen_forget_finished_jobs() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s
        WHERE s.job_id = ANY (ARRAY(
            SELECT n.id FROM new_jobs AS n JOIN old_jobs AS o ON o.id = n.id
            WHERE n.kind = 'fetch' AND n.status IN ('completed', 'failed', 'stopped')
              AND o.status IS DISTINCT FROM n.status));
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.fetch_seen_forget_finished_jobs() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER jobs_fetch_seen_forget_finished AFTER UPDATE ON public.jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION public.fetch_seen_forget_finished_jobs();

-- Extend the lease of a long job.
CREATE OR REPLACE FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        UPDATE public.jobs AS j
        SET heartbeat_at = public.effective_now(p_now)
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;
REVOKE ALL ON FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) TO smuves_worker;

-- Whether job p_job's lease has expired at p_now: it is running and its last sign of life
-- (heartbeat_at) is older than its kind's lease. The comparison with the shortest lease is
-- implied by the one after it, and is there for the planner: it bounds a walk of
-- jobs_lease_idx, which the kind-dependent one cannot. One SQL expression, STABLE (as
-- timestamptz - interval is), no SET, not SECURITY DEFINER: the planner inlines it into the
-- calling statement, which is planned as if the expression were written out there.
CREATE OR REPLACE FUNCTION public.job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_job.status = 'running'
           AND p_job.heartbeat_at < p_now - least(p_fetch_lease, p_export_lease, p_push_lease)
           AND p_job.heartbeat_at < p_now - CASE p_job.kind WHEN 'fetch' THEN p_fetch_lease
                                                            WHEN 'push' THEN p_push_lease
                                                            ELSE p_export_lease END
    $$;
REVOKE ALL ON FUNCTION public.job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval) FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE FUNCTION public.job_to_pending(p_job public.jobs) RETURNS SETOF public.jobs
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RETURN QUERY
        UPDATE public.jobs AS j
        SET status = 'pending',
            run_after = p_job.run_after,
            fair_at = greatest(p_job.fair_at, p_job.run_after),
            attempts = p_job.attempts,
            last_error = p_job.last_error,
            last_error_public = p_job.last_error_public,
            cursor = p_job.cursor,
            processed = p_job.processed,
            finished_at = NULL,
            locked_at = NULL, locked_by = NULL, lease_token = NULL, heartbeat_at = NULL
        WHERE j.id = p_job.id
        RETURNING j.*;
    END
    $$;
REVOKE ALL ON FUNCTION public.job_to_pending(p_job public.jobs) FROM PUBLIC, smuves_app, smuves_worker;

-- Whether a fetch job of portal p_portal_id (job p_job_id, its priority and its place in line,
-- coalesce(fair_at, run_after)) may be claimed under the cap: fewer than
-- p_portal_max_running of the portal's other fetch jobs are running or due ahead of it in
-- line (with p_run_id: ahead of it in that run). A walk of jobs_in_flight_uniq, a few rows
-- per portal. Used as `(SELECT * FROM public.job_within_portal_cap(…))`.
CREATE OR REPLACE FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) RETURNS SETOF boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT count(*) < p_portal_max_running
        FROM public.jobs AS o
        WHERE o.portal_id = p_portal_id AND o.kind = 'fetch'
          AND o.status IN ('pending', 'running') AND o.id <> p_job_id
          AND (o.status = 'running'
               OR (o.run_after <= p_now
                   AND (p_run_id IS NULL OR o.run_id = p_run_id)
                   AND (o.priority > p_priority
                        OR (o.priority = p_priority
                            AND (coalesce(o.fair_at, o.run_after), o.id)
                                < (p_place, p_job_id)))))
    $$;
REVOKE ALL ON FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) FROM PUBLIC, smuves_app, smuves_worker;

-- Wake-ups: one NOTIFY per inserting statement and job kind (payload: the kind). A hint
-- only; workers also poll.
CREATE OR REPLACE FUNCTION public.jobs_notify_inserted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        PERFORM pg_catalog.pg_notify('smuves_jobs', k.kind)
        FROM (SELECT DISTINCT i.kind FROM inserted AS i WHERE i.status = 'pending') AS k;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.jobs_notify_inserted() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER jobs_notify_inserted AFTER INSERT ON public.jobs REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION public.jobs_notify_inserted();

-- Put a job back until p_until without spending the attempt it was claimed with (a rate
-- limit such as HubSpot's daily budget is a wait, not a failure). The cursor is kept.
CREATE OR REPLACE FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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
        v_job.run_after := greatest(p_until, public.effective_now(p_now));
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        v_job.last_error := left(p_reason, 2000);
        v_job.last_error_public := left(p_reason, 2000);  -- a wait, told as it is
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
    END
    $$;
REVOKE ALL ON FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone) TO smuves_worker;

-- Hand a job back now (graceful shutdown) without spending its attempt; the cursor is kept
-- so the next worker resumes where this one stopped, and idle workers are woken.
CREATE OR REPLACE FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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
        v_job.run_after := public.effective_now(p_now);
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
        PERFORM pg_catalog.pg_notify('smuves_jobs', v_job.kind);
    END
    $$;
REVOKE ALL ON FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) TO smuves_worker;

-- Put a failed or stopped job back to pending: attempts reset, due now, lease cleared (by
-- job_to_pending); the cursor and processed count are kept (the fetch resumes) unless
-- p_from_start. Its run is reopened so that it settles again when the job finishes. One row
-- back, with outcome:
--   requeued      done (previous_status says from what)
--   not_found     no such job
--   not_finished  the job is pending, running or completed: nothing to requeue
--   in_flight     another job of the same portal, kind and type is pending or running (the
--                 in-flight unique index would refuse it); blocking_* name that job
CREATE OR REPLACE FUNCTION public.requeue_job(p_job_id bigint, p_from_start boolean DEFAULT false, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(job_id bigint, outcome text, previous_status text, blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_job public.jobs;
        v_blocking public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j WHERE j.id = p_job_id FOR UPDATE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT p_job_id, 'not_found'::text, NULL::text, NULL::bigint,
                                NULL::bigint;
            RETURN;
        END IF;
        IF v_job.status NOT IN ('failed', 'stopped') THEN
            RETURN QUERY SELECT p_job_id, 'not_finished'::text, v_job.status::text,
                                NULL::bigint, NULL::bigint;
            RETURN;
        END IF;

        SELECT * INTO v_blocking FROM public.jobs AS j
        WHERE j.portal_id = v_job.portal_id AND j.kind = v_job.kind
          AND j.content_type = v_job.content_type AND j.status IN ('pending', 'running')
        ORDER BY j.id LIMIT 1;
        IF FOUND THEN
            RETURN QUERY SELECT p_job_id, 'in_flight'::text, v_job.status::text,
                                v_blocking.id, v_blocking.run_id;
            RETURN;
        END IF;

        v_job.attempts := 0;
        v_job.run_after := v_now;
        IF p_from_start THEN
            v_job.cursor := NULL;
            v_job.processed := 0;
        END IF;
        BEGIN
            PERFORM FROM public.job_to_pending(v_job);
        EXCEPTION WHEN unique_violation THEN
            -- Another session made an equal job in flight after the check above.
            SELECT * INTO v_blocking FROM public.jobs AS j
            WHERE j.portal_id = v_job.portal_id AND j.kind = v_job.kind
              AND j.content_type = v_job.content_type AND j.status IN ('pending', 'running')
            ORDER BY j.id LIMIT 1;
            RETURN QUERY SELECT p_job_id, 'in_flight'::text, v_job.status::text,
                                v_blocking.id, v_blocking.run_id;
            RETURN;
        END;

        -- A settled run only settles again while it is open; reopen it.
        UPDATE public.runs AS r
        SET status = CASE WHEN r.started_at IS NULL THEN 'pending' ELSE 'running' END,
            finished_at = NULL
        WHERE r.id = v_job.run_id AND r.status NOT IN ('pending', 'running');

        -- Updates fire no insert trigger: wake idle workers the way release_job does.
        PERFORM pg_catalog.pg_notify('smuves_jobs', v_job.kind);
        RETURN QUERY SELECT p_job_id, 'requeued'::text, v_job.status::text, NULL::bigint,
                            NULL::bigint;
    END
    $$;
REVOKE ALL ON FUNCTION public.requeue_job(p_job_id bigint, p_from_start boolean, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Requeue every failed job of a portal and/or run (NULL: any), newest first, so that when
-- one portal's type failed in several runs the latest job is the one retried and the older
-- ones come back as in_flight behind it. One row per job, as requeue_job.
CREATE OR REPLACE FUNCTION public.retry_failed_jobs(p_portal_id bigint DEFAULT NULL::bigint, p_run_id bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(job_id bigint, outcome text, previous_status text, blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        FOR v_id IN
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'failed'
              AND (p_portal_id IS NULL OR j.portal_id = p_portal_id)
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
            ORDER BY j.id DESC
        LOOP
            RETURN QUERY SELECT * FROM public.requeue_job(v_id, false, p_now);
        END LOOP;
    END
    $$;
REVOKE ALL ON FUNCTION public.retry_failed_jobs(p_portal_id bigint, p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
