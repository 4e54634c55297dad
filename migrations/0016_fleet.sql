-- Fleet scale (DESIGN §4): claims that share the workers among portals, a person's run before
-- a schedule's, a per-portal cap on running fetches, and leases the database decides.
--
-- * jobs.priority: higher is claimed first. The orchestrator sets it through enqueue_job_v2:
--   a person's run (the API, `smuves sync`, `smuves export`) 20, an operator's run from the
--   dashboard 10, a schedule's 0. A login may not raise its jobs above its kind of run.
-- * jobs.fair_at: the job's place in the line within its priority (NULL: run_after). A
--   portal's k-th job in flight is placed k claim quanta (10 s) after it became due, so
--   portals that become due together are claimed in turns (a round robin) rather than one
--   portal's jobs first, and a portal with many jobs waits behind one that became due a
--   little later with few. A job put back to pending (a retry, a park, a release, a
--   requeue) is placed at the later of its old place and its new run_after.
-- * claim_jobs_v2 takes due jobs by (priority DESC, fair_at, id), and skips a portal's fetch
--   job when the portal already has p_portal_max_running fetch jobs running or ahead of it in
--   line (SMUVES_PORTAL_MAX_RUNNING, default 5): one portal's jobs share one HubSpot budget,
--   so more of them at once would only wait for it while other portals wait for a slot.
-- * Lock order. A transaction locks job rows first, in claim order (priority DESC, fair_at,
--   id), and runs last, in id order, in one pass. The claim's FOR UPDATE SKIP LOCKED does not
--   skip everything: a job it saw pending that has since been claimed and is now being
--   completed is waited for (Postgres follows the row's newer versions and waits for their
--   writer). So complete_jobs_v2 locks its batch in claim order, the order a claim meets
--   them, and complete-and-claim (one transaction) completes without settling, then claims
--   and settles the finished batch's runs in the claim's one pass over runs: a transaction
--   that waits for a job row never holds a run another one needs.
-- * job_leases: how long a claimed job's lease lasts, per kind, decided here and not by the
--   caller. The claims of 0004 took the leases as parameters, so that a worker could pass a
--   lease of a second and take over every other worker's jobs with their portals' tokens;
--   they are dropped. Operators change a lease with
--   `UPDATE job_leases SET lease = '10 minutes' WHERE kind = 'fetch'`.

SET LOCAL ROLE smuves_owner;

CREATE TABLE public.job_leases (
    kind   public.job_kind PRIMARY KEY,
    lease  interval NOT NULL
           CONSTRAINT job_leases_sensible CHECK (lease >= interval '1 second')
);
INSERT INTO public.job_leases (kind, lease)
VALUES ('fetch', interval '5 minutes'), ('export', interval '2 minutes');
-- Not tenant data: every role may read it (a worker heartbeats at a third of its lease).
GRANT SELECT ON public.job_leases TO smuves_app, smuves_worker;

ALTER TABLE public.jobs
    ADD COLUMN priority smallint NOT NULL DEFAULT 0,
    ADD COLUMN fair_at timestamptz;
-- The runtime roles read jobs' columns by name (0015).
GRANT SELECT (priority, fair_at) ON public.jobs TO smuves_app, smuves_worker;

-- Claims walk this small index of pending jobs in claim order. A not-yet-due job (a backoff,
-- a parked job) is placed at its run_after, after every job due before it, so the walk meets
-- few of them. jobs_claimable_idx (run_after, id) stays for the oldest due job's age (the
-- dashboard, `smuves stats`); a pending partial index gets an entry only when a job is
-- created or put back to pending, never on a claim.
CREATE INDEX jobs_claim_order_idx
    ON public.jobs (priority DESC, (coalesce(fair_at, run_after)), id)
    WHERE status = 'pending';

CREATE OR REPLACE FUNCTION public.job_to_pending(p_job public.jobs)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
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

-- enqueue_job of 0004 with a priority, and the job placed in line (fair_at, above). Who may
-- add which job is unchanged. The priority is capped by the login: a worker's jobs (a
-- schedule's fetch) at 0, the API's at 20; the operator's login may set any.
CREATE FUNCTION public.enqueue_job_v2(
    p_run_id bigint,
    p_content_type text,
    p_priority smallint DEFAULT 0,
    p_max_attempts integer DEFAULT 3,
    p_run_after timestamptz DEFAULT NULL,
    p_total bigint DEFAULT NULL,
    p_idempotency_key text DEFAULT NULL,
    p_schedule_id bigint DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_run public.runs;
        v_operator boolean := public.operator_session();
        v_run_after timestamptz := coalesce(p_run_after, now());
        v_priority smallint := coalesce(p_priority, 0);
        v_ahead bigint;
    BEGIN
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF NOT v_operator THEN
            v_run_after := greatest(v_run_after, now());
            IF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
               AND v_run.portal_id IN (SELECT public.member_portal_ids()) THEN
                v_priority := least(v_priority, 20);
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

        RETURN QUERY
        INSERT INTO public.jobs AS j (run_id, portal_id, kind, content_type, max_attempts,
                                      run_after, total, idempotency_key, priority, fair_at)
        VALUES (v_run.id, v_run.portal_id, v_run.kind, p_content_type, p_max_attempts,
                v_run_after, p_total, p_idempotency_key, v_priority,
                v_run_after + v_ahead * interval '10 seconds')
        ON CONFLICT DO NOTHING
        RETURNING j.*;
    END
    $$;

-- Claim up to p_limit jobs of p_kinds (NULL: any kind) for worker p_worker: running jobs whose
-- lease expired first (another attempt; at max_attempts they fail instead, as in 0004), then
-- due pending jobs in line: priority, then fair_at, then id. A fetch job is passed over while
-- its portal has p_portal_max_running fetch jobs running or ahead of it in line (with
-- p_run_id: ahead of it in that run), so one statement never claims more than the cap of a
-- portal, and concurrent claims only fewer (a job ahead that another claim is taking counts).
-- p_run_id (NULL: every run) limits it all to one run's jobs (`smuves sync`). The leases are
-- job_leases'. Claimed jobs are returned in id order. p_settle_run_ids: runs to settle
-- (settle_runs) afterwards, locked with the runs the claim starts, in one pass in id order
-- (the runs of a batch complete_jobs_v2 finished without settling, in this transaction).
CREATE FUNCTION public.claim_jobs_v2(
    p_worker text,
    p_kinds text[],
    p_limit integer,
    p_now timestamptz DEFAULT NULL,
    p_run_id bigint DEFAULT NULL,
    p_portal_max_running integer DEFAULT 5,
    p_settle_run_ids bigint[] DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_fetch_lease interval;
        v_export_lease interval;
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
               max(l.lease) FILTER (WHERE l.kind = 'export')
        INTO v_fetch_lease, v_export_lease
        FROM public.job_leases AS l;

        -- Leases rarely expire: one probe of jobs_lease_idx says whether any did.
        IF EXISTS (SELECT FROM public.jobs AS j
                   WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease)
                     AND (p_run_id IS NULL OR j.run_id = p_run_id)) THEN
            WITH stale AS (
                SELECT j.id FROM public.jobs AS j
                WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease)
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

        -- One statement, as in 0004; the cap is a look at the portal's fetch jobs in flight
        -- (jobs_in_flight_uniq: a few rows per portal) for each fetch job considered.
        RETURN QUERY
        WITH stale AS (
            SELECT j.id FROM public.jobs AS j
            WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease)
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
              AND (j.kind <> 'fetch' OR j.xmax <> '0'::xid OR (
                  SELECT count(*) FROM public.jobs AS o
                  WHERE o.portal_id = j.portal_id AND o.kind = 'fetch'
                    AND o.status IN ('pending', 'running') AND o.id <> j.id
                    AND (o.status = 'running'
                         OR (o.run_after <= v_now
                             AND (p_run_id IS NULL OR o.run_id = p_run_id)
                             AND (o.priority > j.priority
                                  OR (o.priority = j.priority
                                      AND (coalesce(o.fair_at, o.run_after), o.id)
                                          < (coalesce(j.fair_at, j.run_after), j.id)))))
                  ) < p_portal_max_running)
            ORDER BY j.priority DESC, coalesce(j.fair_at, j.run_after), j.id
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
            WHERE j.id = ANY (ARRAY(SELECT stale.id FROM stale
                                    UNION ALL SELECT due.id FROM due WHERE NOT due.unchecked))
               OR (j.id = ANY (ARRAY(SELECT due.id FROM due WHERE due.unchecked))
                   AND (j.kind <> 'fetch' OR (
                      SELECT count(*) FROM public.jobs AS o
                      WHERE o.portal_id = j.portal_id AND o.kind = 'fetch'
                        AND o.status IN ('pending', 'running') AND o.id <> j.id
                        AND (o.status = 'running'
                             OR (o.run_after <= v_now
                                 AND (p_run_id IS NULL OR o.run_id = p_run_id)
                                 AND (o.priority > j.priority
                                      OR (o.priority = j.priority
                                          AND (coalesce(o.fair_at, o.run_after), o.id)
                                              < (coalesce(j.fair_at, j.run_after), j.id)))))
                      ) < p_portal_max_running))
            RETURNING j.*
        ), locked_runs AS (
            -- the runs that start and the runs to settle, in one pass in id order
            SELECT r.id, r.status FROM public.runs AS r
            WHERE (r.id = ANY (ARRAY(SELECT claimed.run_id FROM claimed))
                   AND r.status = 'pending')
               OR (r.id = ANY (v_settle) AND r.status IN ('pending', 'running'))
            ORDER BY r.id
            FOR NO KEY UPDATE
        ), started AS (
            UPDATE public.runs AS r
            SET status = 'running', started_at = coalesce(r.started_at, v_now)
            WHERE r.id = ANY (ARRAY(SELECT claimed.run_id FROM claimed))
              AND r.id = ANY (ARRAY(SELECT locked_runs.id FROM locked_runs))
              AND r.status = 'pending'
        )
        SELECT * FROM claimed ORDER BY claimed.id;

        IF v_settle IS NOT NULL THEN
            PERFORM public.settle_runs(v_settle, v_now);
        END IF;
    END
    $$;

-- The seeds' name: claim at most one job.
CREATE FUNCTION public.claim_next_job_v2(
    p_worker text,
    p_kinds text[],
    p_now timestamptz DEFAULT NULL,
    p_portal_max_running integer DEFAULT 5
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT * FROM public.claim_jobs_v2(p_worker, p_kinds, 1, p_now, NULL,
                                           p_portal_max_running)
    $$;

-- complete_jobs of 0004 with the batch locked in claim order (see "Lock order" above), and
-- without settling its runs when p_settle is false: the caller settles them in the same
-- transaction (claim_jobs_v2's p_settle_run_ids). Returns the jobs completed.
CREATE FUNCTION public.complete_jobs_v2(
    p_job_ids bigint[],
    p_lease_tokens uuid[],
    p_processed bigint[] DEFAULT NULL,
    p_now timestamptz DEFAULT NULL,
    p_settle boolean DEFAULT true
)
    RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_done bigint;
    BEGIN
        IF cardinality(p_job_ids) IS DISTINCT FROM cardinality(p_lease_tokens)
           OR (p_processed IS NOT NULL
               AND cardinality(p_processed) IS DISTINCT FROM cardinality(p_job_ids)) THEN
            RAISE EXCEPTION 'complete_jobs: ids, lease tokens and processed counts differ in length'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        RETURN QUERY
        WITH mine AS (
            SELECT j.id, given.processed
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
        WHERE j.id = mine.id AND j.status = 'running'
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

-- settle_runs of 0005, counting only the runs whose jobs are all finished. A fair claim takes
-- one job of many runs, not every job of a few, so a batch's completion settles few of the
-- runs it touched: each is looked at only until an open job of it turns up (most have one)
-- rather than by counting all its jobs. Locking is unchanged (every run, in id order, first).
CREATE OR REPLACE FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
    BEGIN
        PERFORM 1 FROM public.runs AS r
        WHERE r.id = ANY (p_run_ids) AND r.status IN ('pending', 'running')
        ORDER BY r.id
        FOR NO KEY UPDATE;

        RETURN QUERY
        WITH finished AS (
            SELECT given.id FROM unnest(p_run_ids) AS given (id)
            WHERE NOT EXISTS (SELECT FROM public.jobs AS j
                              WHERE j.run_id = given.id AND j.status IN ('pending', 'running'))
        ), counts AS (
            SELECT j.run_id,
                   count(*) AS total,
                   count(*) FILTER (WHERE j.status IN ('pending', 'running')) AS open,
                   count(*) FILTER (WHERE j.status = 'completed') AS completed,
                   count(*) FILTER (WHERE j.status = 'failed') AS failed,
                   count(*) FILTER (WHERE j.status = 'stopped') AS stopped
            FROM public.jobs AS j
            WHERE j.run_id = ANY (ARRAY(SELECT finished.id FROM finished))
            GROUP BY j.run_id
        )
        UPDATE public.runs AS r
        SET status = CASE
                WHEN c.stopped > 0 THEN 'stopped'
                WHEN c.completed = c.total THEN 'completed'
                WHEN c.failed = c.total THEN 'failed'
                ELSE 'partially_failed'
            END,
            started_at = coalesce(r.started_at, v_now),
            finished_at = v_now
        FROM counts AS c
        WHERE r.id = c.run_id AND c.open = 0 AND r.status IN ('pending', 'running')
        RETURNING r.*;
    END
    $$;

-- 0004's names finish in claim order too.
CREATE OR REPLACE FUNCTION public.complete_jobs(
    p_job_ids bigint[],
    p_lease_tokens uuid[],
    p_processed bigint[] DEFAULT NULL,
    p_now timestamptz DEFAULT NULL
)
    RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT * FROM public.complete_jobs_v2(p_job_ids, p_lease_tokens, p_processed, p_now)
    $$;

-- The claims whose callers chose the leases, and the enqueue without a priority.
DROP FUNCTION public.claim_next_job(text, text[], interval, interval, timestamptz);
DROP FUNCTION public.claim_jobs(text, text[], integer, interval, interval, timestamptz, bigint);
DROP FUNCTION public.enqueue_job(bigint, text, integer, timestamptz, bigint, text, bigint);

GRANT EXECUTE ON FUNCTION
    public.claim_jobs_v2(text, text[], integer, timestamptz, bigint, integer, bigint[]),
    public.claim_next_job_v2(text, text[], timestamptz, integer),
    public.complete_jobs_v2(bigint[], uuid[], bigint[], timestamptz, boolean)
TO smuves_worker;
GRANT EXECUTE ON FUNCTION
    public.enqueue_job_v2(bigint, text, smallint, integer, timestamptz, bigint, text, bigint)
TO smuves_app, smuves_worker;
