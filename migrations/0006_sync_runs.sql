-- What fetching and exporting need beyond the queue of 0004:
-- * notifications when a run settles (completed, partially failed, failed); jobs that fail
--   for good are already told by fail_job and by the claims (an exhausted lease);
-- * an export's row follows its job's status, wherever the job changes (handler, retry,
--   exhaustion, an operator's requeue).

SET LOCAL ROLE smuves_owner;

-- One notification per run that settles; settle_runs moves a run out of pending/running
-- exactly once, so no run is told twice. A stopped run was stopped by someone on purpose:
-- nobody needs telling. Fired once per statement, with the statement's old and new rows: one
-- INSERT tells every run the statement settled, instead of a trigger call per updated row.
CREATE FUNCTION public.runs_notify_settled() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        PERFORM public.notify_run_owners(ARRAY(
            SELECT ROW(n.id, 'run_' || n.status,
                       pg_catalog.format(
                           '%s run %s of portal %s %s: %s of %s job(s) completed%s',
                           CASE n.kind WHEN 'fetch' THEN 'Fetch' ELSE 'Export' END,
                           n.id, n.portal_id,
                           replace(n.status::text, '_', ' '),
                           c.completed, c.total,
                           CASE WHEN c.failed IS NULL THEN ''
                                ELSE pg_catalog.format('; failed: %s (see smuves run %s)',
                                                       c.failed, n.id)
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
            WHERE o.status IN ('pending', 'running')
              AND n.status IN ('completed', 'partially_failed', 'failed')
            ORDER BY n.id));
        RETURN NULL;
    END
    $$;
-- Transition tables rule out a column list (UPDATE OF status): the status filter is above.
CREATE TRIGGER runs_notify_settled AFTER UPDATE ON public.runs
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION public.runs_notify_settled();

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

