-- What fetching and exporting need beyond the queue of 0004:
-- * notifications when a run settles (completed, partially failed, failed); jobs that fail
--   for good are already told by fail_job and by the claims (an exhausted lease);
-- * an export's row follows its job's status, wherever the job changes (handler, retry,
--   exhaustion, an operator's requeue);
-- * the state a fetch keeps beside content_items: when each portal's type was last confirmed
--   (content_syncs) and the ids a running fetch has seen (fetch_seen), at the end of the file.

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


-- What a fetch keeps beside content_items, so that a sync writes content rows only when
-- content changed:
--
-- content_syncs: when each portal's type was last confirmed, one row per portal and type,
-- rewritten by the transaction that completes a fetch of it. A completed fetch saw (or had
-- HubSpot confirm) every object of the type, so this one row says for all of them what a
-- `last seen` column on every object said, at the cost of one row per fetch instead of one
-- per object. The API's and the exports' `synced_at` read it (content.sql).
CREATE TABLE public.content_syncs (
    portal_id     bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    content_type  public.content_type NOT NULL,
    -- history, not references (runs are pruned), as content_items' run columns
    run_id        bigint NOT NULL,
    job_id        bigint NOT NULL,
    confirmed_at  timestamptz NOT NULL,
    -- the distinct objects the fetch saw, and how many it marked deleted
    seen          bigint NOT NULL CONSTRAINT content_syncs_seen_nonnegative CHECK (seen >= 0),
    deleted       bigint NOT NULL CONSTRAINT content_syncs_deleted_nonnegative CHECK (deleted >= 0),
    PRIMARY KEY (portal_id, content_type)
);

-- fetch_seen: the ids a fetch job's listing saw, written with each page (in the page's
-- transaction, beside its checkpoint), read by the deletion sweep at the end, removed when
-- the job finishes. It lives in the database, not in the worker, because a job outlives its
-- worker: one that crashes is resumed from its checkpoint by another worker, on another host,
-- whose sweep must still know what the pages before the crash saw. Not a temporary table
-- (that belongs to one session, so dies with the worker's connection), and UNLOGGED: these
-- rows are scratch, and a logged copy of every id on every sync would cost WAL in proportion
-- to the portal, what content_items no longer costs. An unlogged table survives restarts and
-- worker crashes; only a crash of Postgres itself (or a failover: replicas have no copy)
-- empties it, and then a job cannot know what it had seen: each job writes a marker row (id
-- '', which no object has) when its listing starts, and a job resumed without its marker
-- lists again from the start (workers/sweep.py).
-- No foreign keys: a check against jobs or portals for every id stored would lock their rows
-- once per page; the triggers below remove the rows instead.
CREATE UNLOGGED TABLE public.fetch_seen (
    job_id      bigint NOT NULL,
    portal_id   bigint NOT NULL,
    hubspot_id  text NOT NULL,
    PRIMARY KEY (job_id, hubspot_id)
);

CREATE FUNCTION public.fetch_seen_forget_job() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s WHERE s.job_id = NEW.id;
        RETURN NULL;
    END
    $$;
-- A job that finished however (completed, failed for good, stopped) needs its ids no more.
-- One that goes back to pending keeps them: its next attempt resumes from its checkpoint.
CREATE TRIGGER jobs_fetch_seen_forget AFTER UPDATE OF status ON public.jobs
    FOR EACH ROW
    WHEN (NEW.kind = 'fetch' AND OLD.status IS DISTINCT FROM NEW.status
          AND NEW.status IN ('completed', 'failed', 'stopped'))
    EXECUTE FUNCTION public.fetch_seen_forget_job();

CREATE FUNCTION public.fetch_seen_forget_deleted_jobs() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s WHERE s.job_id IN (SELECT o.id FROM old_jobs AS o);
        RETURN NULL;
    END
    $$;
-- Jobs deleted with their portal (or pruned) take their ids along; one statement, once.
CREATE TRIGGER jobs_fetch_seen_forget_deleted AFTER DELETE ON public.jobs
    REFERENCING OLD TABLE AS old_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION public.fetch_seen_forget_deleted_jobs();

-- Row-level security as on every tenant table (0003): the app role reads its portals' sync
-- state; a worker reads and writes its one portal's; fetch_seen is the workers' alone.
ALTER TABLE public.content_syncs ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.content_syncs FORCE ROW LEVEL SECURITY;
CREATE POLICY content_syncs_owner_all ON public.content_syncs TO smuves_owner
    USING (true) WITH CHECK (true);
CREATE POLICY content_syncs_app ON public.content_syncs TO smuves_app
    USING (portal_id IN (SELECT public.member_portal_ids()));
CREATE POLICY content_syncs_worker ON public.content_syncs TO smuves_worker
    USING (portal_id = public.current_app_portal())
    WITH CHECK (portal_id = public.current_app_portal());
GRANT SELECT ON public.content_syncs TO smuves_app;
GRANT SELECT, INSERT, UPDATE ON public.content_syncs TO smuves_worker;

ALTER TABLE public.fetch_seen ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.fetch_seen FORCE ROW LEVEL SECURITY;
CREATE POLICY fetch_seen_owner_all ON public.fetch_seen TO smuves_owner
    USING (true) WITH CHECK (true);
CREATE POLICY fetch_seen_worker ON public.fetch_seen TO smuves_worker
    USING (portal_id = public.current_app_portal())
    WITH CHECK (portal_id = public.current_app_portal());
GRANT SELECT, INSERT, DELETE ON public.fetch_seen TO smuves_worker;
