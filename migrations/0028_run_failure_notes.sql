-- A run's owner is told of its failures once, when it settles, not once per failed job:
-- a HubSpot outage fails every job of a run alike, and one note per job said the same thing
-- five times (and, written before the run was settled, "tried again" of a job that was not).
--
-- * runs_notify_settled: the note of a settled run also says why its jobs failed, in the
--   words their users are told (jobs.last_error_public): once when they failed alike, else
--   per reason with the types it concerns.
-- * fail_job and fail_run_token_refused no longer store a note per failed job; the run's
--   settling tells it.
-- Same conventions as the queue's functions: owned by smuves_owner, search_path pinned,
-- every table qualified; the grants of the functions replaced stand.

SET LOCAL ROLE smuves_owner;

-- Why run p_run_id's failed jobs failed, as their users are told: one reason when they all
-- failed alike, else "types: reason" per reason; NULL when none failed.
CREATE FUNCTION public.run_failures_note(p_run_id bigint)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT CASE WHEN count(*) = 1 THEN max(r.note)
                    ELSE string_agg(r.types || ': ' || r.note, '; ' ORDER BY r.types) END
        FROM (
            SELECT left(coalesce(j.last_error_public, 'failed'), 500) AS note,
                   string_agg(j.content_type::text, ', ' ORDER BY j.content_type::text) AS types
            FROM public.jobs AS j
            WHERE j.run_id = p_run_id AND j.status = 'failed'
            GROUP BY 1
        ) AS r
        HAVING count(*) > 0
    $$;

-- The note of a settled run (runs_notify_settled of the content rejects), now also saying
-- why its jobs failed.
CREATE OR REPLACE FUNCTION public.runs_notify_settled() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        PERFORM public.notify_run_owners(ARRAY(
            SELECT ROW(n.id, 'run_' || n.status,
                       pg_catalog.format(
                           '%s run %s of portal %s %s: %s of %s job(s) completed%s%s%s',
                           CASE n.kind WHEN 'fetch' THEN 'Fetch' ELSE 'Export' END,
                           n.id, n.portal_id,
                           replace(n.status::text, '_', ' '),
                           c.completed, c.total,
                           CASE WHEN c.failed IS NULL THEN ''
                                ELSE pg_catalog.format('; failed: %s (see smuves run %s)',
                                                       c.failed, n.id)
                           END,
                           CASE WHEN w.note IS NULL THEN ''
                                ELSE '. ' || w.note
                           END,
                           CASE WHEN x.note IS NULL THEN ''
                                ELSE '. ' || x.note
                           END),
                       coalesce(n.finished_at, now()))::public.run_notice
            FROM new_runs AS n
            JOIN old_runs AS o ON o.id = n.id
            CROSS JOIN LATERAL (
                SELECT count(*) AS total,
                       count(*) FILTER (WHERE j.status = 'completed') AS completed,
                       string_agg(j.content_type::text, ', ' ORDER BY j.content_type::text)
                           FILTER (WHERE j.status = 'failed') AS failed
                FROM public.jobs AS j WHERE j.run_id = n.id
            ) AS c
            CROSS JOIN LATERAL (SELECT public.run_failures_note(n.id) AS note) AS w
            CROSS JOIN LATERAL (SELECT public.run_rejects_note(n.id) AS note) AS x
            WHERE o.status IN ('pending', 'running')
              AND n.status IN ('completed', 'partially_failed', 'failed')
            ORDER BY n.id));
        RETURN NULL;
    END
    $$;

-- Record a failure (fail_job of the queue): as before, without a note of its own.
CREATE OR REPLACE FUNCTION public.fail_job(
    p_job_id bigint,
    p_lease_token uuid,
    p_error text,
    p_retryable boolean,
    p_backoff_base interval DEFAULT '10 seconds',
    p_backoff_max interval DEFAULT '10 minutes',
    p_jitter_ratio double precision DEFAULT 0.1,
    p_now timestamptz DEFAULT NULL,
    p_error_public text DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
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

-- Fail the open jobs of a run whose token HubSpot refused (fail_run_token_refused): as
-- before, without a note per job.
CREATE OR REPLACE FUNCTION public.fail_run_token_refused(
    p_job_id bigint,
    p_lease_token uuid,
    p_error text,
    p_error_public text,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_job public.jobs;
        v_failed public.jobs[];
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j WHERE j.id = p_job_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        PERFORM FROM public.jobs AS j
        WHERE j.run_id = v_job.run_id AND j.status IN ('pending', 'running')
        ORDER BY j.id
        FOR UPDATE;
        IF NOT EXISTS (SELECT FROM public.jobs AS j
                       WHERE j.id = p_job_id AND j.lease_token = p_lease_token
                         AND j.status = 'running') THEN
            RETURN;
        END IF;

        WITH failed AS (
            UPDATE public.jobs AS j
            SET status = 'failed',
                finished_at = v_now,
                last_error = left(p_error, 2000),
                last_error_public = left(p_error_public, 2000)
            WHERE j.run_id = v_job.run_id AND j.status IN ('pending', 'running')
            RETURNING j.*
        )
        SELECT array_agg(f ORDER BY f.id) INTO v_failed FROM failed AS f;

        UPDATE public.portals AS p
        SET token_rejected_at = coalesce(p.token_rejected_at, v_now)
        WHERE p.id = v_job.portal_id;

        PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
        RETURN QUERY SELECT * FROM unnest(v_failed);
    END
    $$;
