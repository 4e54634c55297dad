-- The operators' dashboard (`smuves dashboard`, smuves_sync/dashboard): the indexes that keep
-- its pages fast with a million finished jobs, and what it records. Its queries are in the
-- noun files of smuves_sync/db/queries/ (jobs, runs, portals, content, schedules,
-- notifications, stats, hubspot_minutes, operator_actions); they run as the login role,
-- across every tenant, like the on-call commands. Its Stop calls run_to_stopped (0008), as
-- stop_run does after its membership check.
--
-- Indexes. A change of a job's status is never a HOT update (0002), so every index whose
-- predicate the new row version matches gets an entry. The three new job indexes are partial
-- on finished statuses: a job pays for them once, when it finishes, never on its claim,
-- heartbeats or checkpoints (those row versions are `running`).
--   jobs_dead_idx            failed and stopped jobs, newest first: the dead letter, its
--                            counts and the overview's recent failures
--   jobs_completed_idx       completed jobs by finish time: completed per minute, last 24 h
--   jobs_fetched_idx         finished fetches per portal and type, newest last: a portal's
--                            last sync of each type (and its last completed one)
--   runs_created_idx         every run newest first (the runs list without a portal filter)
--   runs_status_created_idx  the runs of one status newest first (the list filtered by status)
--   notifications_run_idx    a run's notifications; also what prune's deletes by run need
-- `kind` rides along in the first two (INCLUDE) so counts by kind are index-only scans, and
-- `status` in the third so that walking back to the last completed fetch reads no rows.
--
-- `finished_at IS NOT NULL` in jobs_completed_idx's predicate says nothing new (a completed
-- job has finished) but keeps the index away from statements that only say `status =
-- 'completed'`: complete_jobs (0004) looks up its batch's runs with `id = ANY (…) AND status =
-- 'completed'` under a generic plan, and given this index with `status = 'completed'` alone
-- the planner walked every completed job for each batch (the queue benchmark's drain fell
-- from 22,000 to 14,000 jobs/s). The dashboard's queries bound finished_at, which implies it.
--
-- Tables (not tenant data, but under row-level security like every table; only the owner
-- and the login role read them, workers write the first through a function):
--   hubspot_minutes    HubSpot requests and 429 answers per minute, summed over every
--                      process that talks to HubSpot (a worker adds what its own counters
--                      gained since it last wrote, every few seconds); the last 7 days
--   operator_actions   the audit trail of the dashboard's buttons: who, what, when, outcome
--
-- Function:
--   record_hubspot_minute  SECURITY DEFINER for smuves_worker: add one process's counts

SET LOCAL ROLE smuves_owner;

CREATE INDEX jobs_dead_idx ON public.jobs (status, id) INCLUDE (kind)
    WHERE status IN ('failed', 'stopped');
CREATE INDEX jobs_completed_idx ON public.jobs (finished_at) INCLUDE (kind)
    WHERE status = 'completed' AND finished_at IS NOT NULL;
CREATE INDEX jobs_fetched_idx ON public.jobs (portal_id, content_type, finished_at)
    INCLUDE (status) WHERE kind = 'fetch' AND finished_at IS NOT NULL;
CREATE INDEX runs_created_idx ON public.runs (created_at, id);
CREATE INDEX runs_status_created_idx ON public.runs (status, created_at, id);
CREATE INDEX notifications_run_idx ON public.notifications (run_id);

CREATE TABLE public.hubspot_minutes (
    -- the start of the minute (date_trunc('minute', …))
    minute        timestamptz PRIMARY KEY,
    requests      bigint NOT NULL DEFAULT 0
                  CONSTRAINT hubspot_minutes_requests_nonnegative CHECK (requests >= 0),
    rate_limited  bigint NOT NULL DEFAULT 0
                  CONSTRAINT hubspot_minutes_rate_limited_nonnegative CHECK (rate_limited >= 0)
);

CREATE TABLE public.operator_actions (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT now(),
    -- the name the operator gave when signing in
    actor    text NOT NULL CONSTRAINT operator_actions_actor_present CHECK (actor <> ''),
    -- the browser's address as the dashboard saw it
    client   text,
    -- an opaque id of the dashboard session (a hash: never the cookie itself)
    session  text,
    action   text NOT NULL CONSTRAINT operator_actions_action_word CHECK (action ~ '^[a-z][a-z_]*$'),
    -- what it was done to: {"job_ids": […]}, {"run_id": …}, {"portal_id": …}
    target   jsonb NOT NULL DEFAULT '{}',
    -- what came of it, e.g. each requeue's outcome
    outcome  jsonb NOT NULL DEFAULT '{}'
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['hubspot_minutes', 'operator_actions'] LOOP
        EXECUTE pg_catalog.format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE pg_catalog.format('ALTER TABLE public.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE pg_catalog.format(
            'CREATE POLICY %I ON public.%I TO smuves_owner USING (true) WITH CHECK (true)',
            t || '_owner_all', t);
    END LOOP;
END
$$;

-- Add one process's HubSpot requests and 429s to the current minute (p_now: injected time),
-- and forget minutes older than a week (a range of the primary key; usually nothing).
CREATE FUNCTION public.record_hubspot_minute(
    p_requests bigint,
    p_rate_limited bigint,
    p_now timestamptz DEFAULT NULL
)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_minute timestamptz := date_trunc('minute', coalesce(p_now, now()));
    BEGIN
        IF p_requests IS NULL OR p_rate_limited IS NULL OR p_requests < 0
           OR p_rate_limited < 0 THEN
            RAISE EXCEPTION 'record_hubspot_minute: counts must be >= 0, got % and %',
                p_requests, p_rate_limited
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        INSERT INTO public.hubspot_minutes AS m (minute, requests, rate_limited)
        VALUES (v_minute, p_requests, p_rate_limited)
        ON CONFLICT (minute) DO UPDATE
        SET requests = m.requests + excluded.requests,
            rate_limited = m.rate_limited + excluded.rate_limited;
        DELETE FROM public.hubspot_minutes AS m WHERE m.minute < v_minute - interval '7 days';
    END
    $$;

GRANT EXECUTE ON FUNCTION public.record_hubspot_minute(bigint, bigint, timestamptz)
TO smuves_worker;
