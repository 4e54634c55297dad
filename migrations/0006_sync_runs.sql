-- What fetching and exporting need beyond the queue of 0004:
-- * notifications when a run settles (completed, partially failed, failed); jobs that fail
--   for good are already told by fail_job and by the claims (an exhausted lease);
-- * an export's row follows its job's status, wherever the job changes (handler, retry,
--   exhaustion, an operator's requeue);
-- * a claim limited to one run, for `smuves sync`, which works its own run in-process and
--   must not pick up other portals' work.

SET LOCAL ROLE smuves_owner;

-- One notification per run that settles; settle_runs moves a run out of pending/running
-- exactly once, so the trigger cannot fire twice for one run. A stopped run was stopped by
-- someone on purpose: nobody needs telling.
CREATE FUNCTION public.runs_notify_settled() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_total bigint;
        v_completed bigint;
        v_failed text;
        v_what text;
    BEGIN
        SELECT count(*),
               count(*) FILTER (WHERE j.status = 'completed'),
               string_agg(j.content_type::text, ', ' ORDER BY j.content_type::text)
                   FILTER (WHERE j.status = 'failed')
        INTO v_total, v_completed, v_failed
        FROM public.jobs AS j WHERE j.run_id = NEW.id;

        v_what := CASE NEW.kind WHEN 'fetch' THEN 'Fetch' ELSE 'Export' END;
        INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
        SELECT coalesce(NEW.owner_id, p.owner_id), NEW.id, 'run_' || NEW.status,
               pg_catalog.format(
                   '%s run %s of portal %s %s: %s of %s job(s) completed%s',
                   v_what, NEW.id, NEW.portal_id,
                   replace(NEW.status::text, '_', ' '),
                   v_completed, v_total,
                   CASE WHEN v_failed IS NULL THEN ''
                        ELSE pg_catalog.format('; failed: %s (see smuves run %s)', v_failed, NEW.id)
                   END),
               coalesce(NEW.finished_at, now())
        FROM public.portals AS p WHERE p.id = NEW.portal_id;
        RETURN NULL;
    END
    $$;
CREATE TRIGGER runs_notify_settled AFTER UPDATE OF status ON public.runs
    FOR EACH ROW
    WHEN (OLD.status IN ('pending', 'running')
          AND NEW.status IN ('completed', 'partially_failed', 'failed'))
    EXECUTE FUNCTION public.runs_notify_settled();

-- An export row mirrors its job: pending, running, completed, failed, stopped.
CREATE FUNCTION public.exports_follow_job() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
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
CREATE TRIGGER jobs_exports_follow AFTER UPDATE OF status ON public.jobs
    FOR EACH ROW
    WHEN (NEW.kind = 'export' AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION public.exports_follow_job();

-- claim_jobs (0004) restricted to the jobs of one run: expired leases first, then due
-- pending jobs, oldest first; the same lease, attempt and run-start rules.
CREATE FUNCTION public.claim_run_jobs(
    p_worker text,
    p_run_id bigint,
    p_limit integer,
    p_fetch_lease interval DEFAULT '5 minutes',
    p_export_lease interval DEFAULT '2 minutes',
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_failed bigint;
        v_claimed public.jobs[];
        v_more public.jobs[];
    BEGIN
        IF p_limit IS NULL OR p_limit < 1 THEN
            RAISE EXCEPTION 'claim_run_jobs: p_limit must be at least 1, got %', p_limit
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        -- Expired leases at their last attempt fail (reason, notification, settled run),
        -- as in claim_jobs.
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.run_id = p_run_id
              AND j.status = 'running'
              AND j.heartbeat_at < v_now - CASE j.kind WHEN 'fetch' THEN p_fetch_lease
                                                      ELSE p_export_lease END
              AND j.attempts >= j.max_attempts
            FOR UPDATE SKIP LOCKED
        ), failed AS (
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = pg_catalog.format(
                    'gave up after %s attempts: the worker holding the job (%s) stopped '
                    'sending heartbeats, so its lease expired each time',
                    j.attempts, j.locked_by)
            FROM stale WHERE j.id = stale.id
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
        SELECT count(*) INTO v_failed FROM failed;
        IF v_failed > 0 THEN
            PERFORM public.settle_runs(ARRAY[p_run_id], v_now);
        END IF;

        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE j.run_id = p_run_id
              AND j.status = 'running'
              AND j.heartbeat_at < v_now - CASE j.kind WHEN 'fetch' THEN p_fetch_lease
                                                      ELSE p_export_lease END
              AND j.attempts < j.max_attempts
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
            FROM stale WHERE j.id = stale.id
            RETURNING j
        )
        SELECT coalesce(array_agg(c.j), '{}') INTO v_claimed FROM claimed AS c;

        IF cardinality(v_claimed) < p_limit THEN
            WITH due AS (
                SELECT j.id FROM public.jobs AS j
                WHERE j.run_id = p_run_id
                  AND j.status = 'pending'
                  AND j.run_after <= v_now
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
                FROM due WHERE j.id = due.id
                RETURNING j
            )
            SELECT coalesce(array_agg(c.j), '{}') INTO v_more FROM claimed AS c;
            v_claimed := v_claimed || v_more;
        END IF;

        IF cardinality(v_claimed) > 0 THEN
            UPDATE public.runs AS r
            SET status = 'running', started_at = coalesce(r.started_at, v_now)
            WHERE r.id = p_run_id AND r.status = 'pending';
        END IF;

        RETURN QUERY SELECT * FROM unnest(v_claimed) ORDER BY id;
    END
    $$;

REVOKE EXECUTE ON FUNCTION
    public.runs_notify_settled(),
    public.exports_follow_job(),
    public.claim_run_jobs(text, bigint, integer, interval, interval, timestamptz)
FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
    public.claim_run_jobs(text, bigint, integer, interval, interval, timestamptz)
TO smuves_worker;
