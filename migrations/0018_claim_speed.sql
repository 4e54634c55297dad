-- The fair claim (0016) at the pace of the oldest-first claim it replaced. Nothing it decides
-- changes: the same jobs are claimed in the same line, under the same cap, with the same
-- leases, locks in the same order, and the same runs are started and settled.
--
-- * The cap on a portal's running fetches is written once, as job_within_portal_cap: an SQL
--   function the planner inlines into the claim (LANGUAGE sql, STABLE, a set of one row, no
--   SET, not SECURITY DEFINER), so the claim's statement is planned as if the count were
--   written out where it is used, twice: when a due job is walked, and again when a job that
--   another transaction held at the walk is claimed.
-- * No `id = ANY (array)` test of one array against each row of another. The claim of 0016
--   asked, for every job it claimed and every run it locked, whether its id was in an array
--   of a few hundred ids (a filter, compared element by element), and found the runs to
--   start with two arrays on one index column (a btree walk per pair of elements): work that
--   grew with the square of the batch, which fair batches (one job of each of 256 runs, not
--   every job of 29) make large. Each id list is now an index condition or a hashed IN.

SET LOCAL ROLE smuves_owner;

-- Whether a fetch job of portal p_portal_id (job p_job_id, its priority and its place in line,
-- coalesce(fair_at, run_after)) may be claimed under the cap: fewer than
-- p_portal_max_running of the portal's other fetch jobs are running or due ahead of it in
-- line (with p_run_id: ahead of it in that run). A walk of jobs_in_flight_uniq, a few rows
-- per portal. Used as `(SELECT * FROM public.job_within_portal_cap(…))`.
CREATE FUNCTION public.job_within_portal_cap(
    p_portal_id bigint,
    p_job_id bigint,
    p_priority smallint,
    p_place timestamptz,
    p_now timestamptz,
    p_run_id bigint,
    p_portal_max_running integer
)
    RETURNS SETOF boolean
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

-- claim_jobs_v2 of 0016, the same claim (see there and README "Sharing the workers among
-- portals"), written so that its cost grows with the batch rather than its square.
CREATE OR REPLACE FUNCTION public.claim_jobs_v2(
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
            -- the runs that start and the runs to settle, in one pass in id order
            SELECT r.id, r.status FROM public.runs AS r
            WHERE r.id = ANY (ARRAY(SELECT claimed.run_id FROM claimed
                                    UNION ALL SELECT s.id FROM unnest(v_settle) AS s (id)))
              AND ((r.status = 'pending' AND r.id IN (SELECT claimed.run_id FROM claimed))
                   OR (r.status IN ('pending', 'running')
                       AND r.id IN (SELECT s.id FROM unnest(v_settle) AS s (id))))
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
        SELECT * FROM claimed ORDER BY claimed.id;

        IF v_settle IS NOT NULL THEN
            PERFORM public.settle_runs(v_settle, v_now);
        END IF;
    END
    $$;
