-- What fetching and exporting need beyond the queue of 0004:
-- * notifications when a run settles (completed, partially failed, failed); jobs that fail
--   for good are already told by fail_job and by the claims (an exhausted lease);
-- * an export's row follows its job's status, wherever the job changes (handler, retry,
--   exhaustion, an operator's requeue).

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

REVOKE EXECUTE ON FUNCTION
    public.runs_notify_settled(),
    public.exports_follow_job()
FROM PUBLIC;
