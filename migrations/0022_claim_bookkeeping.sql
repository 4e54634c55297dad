-- The fair claim's bookkeeping for less (README "Sharing the workers among portals"). Nothing
-- it decides changes: the same jobs are claimed in the same line, under the same cap, with
-- the same leases; the same runs start and settle, and rows are locked in the same order.
--
-- A fair batch holds one job of each of some 256 runs, not every job of 29, so what a claim
-- and a completion do per run and per job weighs more than it did for the claim of 0004:
--
-- * complete_jobs_v2 locks its batch in claim order (0016), then found each row it had
--   locked again through jobs_pkey to update it. It now updates the row version it locked,
--   by its ctid: a row this transaction has locked cannot be updated by another under it.
-- * settle_runs locks its runs, then settles those whose jobs are all finished. A claim
--   that settles the runs of the batch completed before it (complete-and-claim) has already
--   locked them, in its one pass over runs in id order, and settle_runs walked runs_pkey to
--   lock each of them again. The settling itself is now settle_locked_runs, for a caller
--   that holds the locks; settle_runs is the lock, then that.
-- * A run to settle of which the claim has just claimed a job cannot finish: that job is
--   running, and whoever completes it settles the run then, after this transaction has
--   committed. The claim neither locks nor looks at such a run. (Of the runs a worker's
--   batch completes, the next batch it claims holds a job of about one in five when four
--   workers share a backlog.)

SET LOCAL ROLE smuves_owner;

-- settle_runs of 0016 without its locks: the caller has locked the runs p_run_ids that are
-- pending or running FOR NO KEY UPDATE (in id order, after its job rows), so that the
-- count below sees every job change committed before it could lock them. Not granted: it
-- runs inside settle_runs and claim_jobs_v2.
CREATE FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamptz DEFAULT NULL)
    RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
    BEGIN
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

-- settle_runs of 0016: the runs locked, then settled by settle_locked_runs.
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

        RETURN QUERY SELECT * FROM public.settle_locked_runs(p_run_ids, v_now);
    END
    $$;

-- claim_jobs_v2 of 0018, the same claim; the runs it has locked are settled without locking
-- them again.
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
        v_claimed public.jobs[];
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
        SELECT array_agg(claimed ORDER BY claimed.id) INTO v_claimed FROM claimed;
        RETURN QUERY SELECT * FROM unnest(v_claimed);

        IF v_settle IS NOT NULL THEN
            -- locked by the claim's pass over runs above, but for those with a claimed job
            PERFORM public.settle_locked_runs(
                ARRAY(SELECT s.id FROM unnest(v_settle) AS s (id)
                      WHERE s.id NOT IN (SELECT c.run_id FROM unnest(v_claimed) AS c)),
                v_now);
        END IF;
    END
    $$;

-- complete_jobs_v2 of 0016; the locked rows are updated where they were locked (above).
CREATE OR REPLACE FUNCTION public.complete_jobs_v2(
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
