-- Operator and scheduler state changes (DESIGN §1 "on-call" and "cron"), as SQL functions so
-- each one is a single atomic step with the same conventions as the queue functions:
-- owned by smuves_owner, search_path pinned, every table schema-qualified, EXECUTE granted
-- only where needed, time injectable through p_now (NULL: the database's clock).
--
-- claim_due_schedule  SECURITY DEFINER, for smuves_worker: the scheduler must see every
--                     portal's schedules, which the worker's row-level security hides.
-- requeue_job,        operator commands; they run as the login role, which already sees
-- retry_failed_jobs,  every row, so they are not SECURITY DEFINER and nobody else may run
-- prune_history       them.

SET LOCAL ROLE smuves_owner;

-- One due, enabled schedule (next_run_at at or before now), locked FOR UPDATE SKIP LOCKED:
-- the lock lasts until the caller's transaction ends, so however many workers ask at once,
-- each due schedule is handed to exactly one of them; the holder starts the fetch and moves
-- next_run_at on before committing, after which the schedule is no longer due. A schedule
-- whose next_run_at was never computed (NULL) is handed out too, so that the caller can set
-- it. p_skip: ids this caller already tried in this round (one that failed stays due).
CREATE FUNCTION public.claim_due_schedule(
    p_skip bigint[] DEFAULT '{}',
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.schedules
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT s.* FROM public.schedules AS s
        WHERE s.enabled
          AND (s.next_run_at IS NULL OR s.next_run_at <= coalesce(p_now, now()))
          AND s.id <> ALL (coalesce(p_skip, '{}'))
        ORDER BY s.next_run_at NULLS FIRST, s.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    $$;

-- Put a failed or stopped job back to pending: attempts reset, due now, lease cleared (by
-- job_to_pending of 0004); the cursor and processed count are kept (the fetch resumes) unless
-- p_from_start. Its run is reopened so that it settles again when the job finishes. One row
-- back, with outcome:
--   requeued      done (previous_status says from what)
--   not_found     no such job
--   not_finished  the job is pending, running or completed: nothing to requeue
--   in_flight     another job of the same portal, kind and type is pending or running (the
--                 in-flight unique index would refuse it); blocking_* name that job
CREATE FUNCTION public.requeue_job(
    p_job_id bigint,
    p_from_start boolean DEFAULT false,
    p_now timestamptz DEFAULT NULL
)
    RETURNS TABLE (job_id bigint, outcome text, previous_status text,
                   blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
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

-- Requeue every failed job of a portal and/or run (NULL: any), newest first, so that when
-- one portal's type failed in several runs the latest job is the one retried and the older
-- ones come back as in_flight behind it. One row per job, as requeue_job.
CREATE FUNCTION public.retry_failed_jobs(
    p_portal_id bigint DEFAULT NULL,
    p_run_id bigint DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS TABLE (job_id bigint, outcome text, previous_status text,
                   blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
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

-- Delete history older than p_older_than: settled runs that finished before the cutoff, with
-- their jobs, exports and notifications, and any notification created before the cutoff.
-- Open runs and their jobs are never touched. Returns how many rows of each table went (or,
-- with p_dry_run, would go). Export files on disk are not touched.
CREATE FUNCTION public.prune_history(
    p_older_than interval,
    p_dry_run boolean DEFAULT false,
    p_now timestamptz DEFAULT NULL
)
    RETURNS TABLE (runs bigint, jobs bigint, exports bigint, notifications bigint)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_cutoff timestamptz;
        v_run_ids bigint[];
        v_runs bigint;
        v_jobs bigint;
        v_exports bigint;
        v_notifications bigint;
    BEGIN
        IF p_older_than IS NULL OR p_older_than <= interval '0' THEN
            RAISE EXCEPTION 'prune_history: the age must be positive, got %', p_older_than
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_cutoff := coalesce(p_now, now()) - p_older_than;

        -- FOR UPDATE re-checks the status of a run that a requeue is reopening right now.
        SELECT coalesce(array_agg(s.id), '{}') INTO v_run_ids FROM (
            SELECT r.id FROM public.runs AS r
            WHERE r.status NOT IN ('pending', 'running')
              AND coalesce(r.finished_at, r.created_at) < v_cutoff
            ORDER BY r.id
            FOR UPDATE
        ) AS s;

        IF p_dry_run THEN
            SELECT count(*) INTO v_notifications FROM public.notifications AS n
            WHERE n.run_id = ANY (v_run_ids) OR n.created_at < v_cutoff;
            SELECT count(*) INTO v_exports FROM public.exports AS e
            WHERE e.run_id = ANY (v_run_ids);
            SELECT count(*) INTO v_jobs FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            v_runs := cardinality(v_run_ids);
        ELSE
            DELETE FROM public.notifications AS n
            WHERE n.run_id = ANY (v_run_ids) OR n.created_at < v_cutoff;
            GET DIAGNOSTICS v_notifications = ROW_COUNT;
            DELETE FROM public.exports AS e WHERE e.run_id = ANY (v_run_ids);
            GET DIAGNOSTICS v_exports = ROW_COUNT;
            DELETE FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            GET DIAGNOSTICS v_jobs = ROW_COUNT;
            DELETE FROM public.runs AS r WHERE r.id = ANY (v_run_ids);
            GET DIAGNOSTICS v_runs = ROW_COUNT;
        END IF;
        RETURN QUERY SELECT v_runs, v_jobs, v_exports, v_notifications;
    END
    $$;

GRANT EXECUTE ON FUNCTION public.claim_due_schedule(bigint[], timestamptz) TO smuves_worker;
