-- Runs: settling them from their jobs, stopping, reconciling the stuck ones, notes and notices,
-- pruning old ones.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- Fail the open jobs of a run whose token HubSpot refused (fail_run_token_refused): as
-- before, without a note per job.
CREATE OR REPLACE FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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
REVOKE ALL ON FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone) TO smuves_worker;

-- Store p_notices (in their order) for the people their runs concern. plpgsql rather than
-- sql: an INSERT cannot be inlined, and plpgsql keeps its plan for the session where a sql
-- function would plan it again on every call (notify_settled_runs calls it whenever runs
-- settle). Not granted: it runs inside the queue's functions, whose search_path is pinned,
-- with their rights; no SET clause, as settle_runs (switching settings on every call costs).
CREATE OR REPLACE FUNCTION public.notify_run_owners(p_notices public.run_notice[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
    BEGIN
        INSERT INTO public.notifications (user_id, run_id, kind, message, created_at)
        SELECT coalesce(r.owner_id, p.owner_id), n.run_id, n.kind, n.message, n.created_at
        FROM unnest(p_notices) WITH ORDINALITY AS n
        JOIN public.runs AS r ON r.id = n.run_id
        JOIN public.portals AS p ON p.id = r.portal_id
        ORDER BY n.ordinality;
    END
    $$;
REVOKE ALL ON FUNCTION public.notify_run_owners(p_notices public.run_notice[]) FROM PUBLIC, smuves_app, smuves_worker;

-- Delete the runs older than p_older_than: settled runs that finished before the cutoff, with
-- their jobs, exports and notifications, and any notification created before the cutoff.
-- Open runs and their jobs are never touched. Returns how many rows of each table went (or,
-- with p_dry_run, would go), and in export_files the exports that went (a JSON array of
-- {portal_id, run_id, content_type, format}): their files are the caller's to remove, after
-- this transaction commits.
CREATE OR REPLACE FUNCTION public.prune_runs(p_older_than interval, p_dry_run boolean DEFAULT false, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(runs bigint, jobs bigint, exports bigint, notifications bigint, export_files jsonb)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_cutoff timestamptz;
        v_run_ids bigint[];
        v_runs bigint;
        v_jobs bigint;
        v_exports bigint;
        v_files jsonb;
        v_notifications bigint;
    BEGIN
        IF p_older_than IS NULL OR p_older_than <= interval '0' THEN
            RAISE EXCEPTION 'prune_runs: the age must be positive, got %', p_older_than
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
            SELECT count(*),
                   coalesce(jsonb_agg(jsonb_build_object(
                       'portal_id', e.portal_id, 'run_id', e.run_id,
                       'content_type', e.content_type, 'format', e.format) ORDER BY e.id),
                       '[]')
            INTO v_exports, v_files
            FROM public.exports AS e WHERE e.run_id = ANY (v_run_ids);
            SELECT count(*) INTO v_jobs FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            v_runs := cardinality(v_run_ids);
        ELSE
            DELETE FROM public.notifications AS n
            WHERE n.run_id = ANY (v_run_ids) OR n.created_at < v_cutoff;
            GET DIAGNOSTICS v_notifications = ROW_COUNT;
            WITH gone AS (
                DELETE FROM public.exports AS e WHERE e.run_id = ANY (v_run_ids)
                RETURNING e.id, e.portal_id, e.run_id, e.content_type, e.format
            )
            SELECT count(*),
                   coalesce(jsonb_agg(jsonb_build_object(
                       'portal_id', g.portal_id, 'run_id', g.run_id,
                       'content_type', g.content_type, 'format', g.format) ORDER BY g.id),
                       '[]')
            INTO v_exports, v_files
            FROM gone AS g;
            DELETE FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            GET DIAGNOSTICS v_jobs = ROW_COUNT;
            DELETE FROM public.runs AS r WHERE r.id = ANY (v_run_ids);
            GET DIAGNOSTICS v_runs = ROW_COUNT;
        END IF;
        RETURN QUERY SELECT v_runs, v_jobs, v_exports, v_notifications, v_files;
    END
    $$;
REVOKE ALL ON FUNCTION public.prune_runs(p_older_than interval, p_dry_run boolean, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Heal runs left pending/running although all their jobs are finished (a worker died
-- between finishing a job and settling, or jobs were finished by hand), and mark running
-- the pending runs whose jobs have started. Returns the runs it settled.
CREATE OR REPLACE FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_run_ids bigint[];
    BEGIN
        WITH started AS (
            SELECT r.id FROM public.runs AS r
            WHERE r.status = 'pending'
              AND EXISTS (SELECT FROM public.jobs AS j
                          WHERE j.run_id = r.id AND j.status <> 'pending')
            ORDER BY r.id
            FOR NO KEY UPDATE SKIP LOCKED
        )
        UPDATE public.runs AS r
        SET status = 'running', started_at = coalesce(r.started_at, v_now)
        FROM started WHERE r.id = started.id;

        SELECT array_agg(r.id) INTO v_run_ids FROM public.runs AS r
        WHERE r.status IN ('pending', 'running')
          AND EXISTS (SELECT FROM public.jobs AS j WHERE j.run_id = r.id)
          AND NOT EXISTS (SELECT FROM public.jobs AS j
                          WHERE j.run_id = r.id AND j.status IN ('pending', 'running'));
        IF v_run_ids IS NULL THEN
            RETURN;
        END IF;
        RETURN QUERY SELECT * FROM public.settle_runs(v_run_ids, v_now);
    END
    $$;
REVOKE ALL ON FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone) TO smuves_worker;

-- Why run p_run_id's failed jobs failed, as their users are told: one reason when they all
-- failed alike, else "types: reason" per reason; NULL when none failed. plpgsql rather than
-- sql, as run_rejects_note: a sql function with a SET clause plans its query again in every
-- statement that calls it, and each run that settles calls both (notify_settled_runs).
CREATE OR REPLACE FUNCTION public.run_failures_note(p_run_id bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RETURN (
        SELECT CASE WHEN count(*) = 1 THEN max(r.note)
                    ELSE string_agg(r.types || ': ' || r.note, '; ' ORDER BY r.types) END
        FROM (
            SELECT left(coalesce(j.last_error_public, 'failed'), 500) AS note,
                   string_agg(j.content_type::text, ', ' ORDER BY j.content_type::text) AS types
            FROM public.jobs AS j
            WHERE j.run_id = p_run_id AND j.status = 'failed'
            GROUP BY 1
        ) AS r
        HAVING count(*) > 0);
    END
    $$;
REVOKE ALL ON FUNCTION public.run_failures_note(p_run_id bigint) FROM PUBLIC, smuves_app, smuves_worker;

-- "3 objects could not be stored: site_page 2 (<the commonest reason>; and 1 other reason),
-- blog_post 1 (<its reason>)" for run p_run_id, or NULL when it stored everything: per type
-- how many, with the commonest reason (and how many other reasons there were). Runs with its caller's rights, so
-- row-level security decides what it counts. plpgsql, which keeps its plan for the session.
CREATE OR REPLACE FUNCTION public.run_rejects_note(p_run_id bigint) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RETURN (
        WITH by_type AS (
            SELECT r.content_type::text AS content_type, count(*) AS objects,
                   mode() WITHIN GROUP (ORDER BY r.reason) AS reason,
                   count(DISTINCT r.reason) AS reasons
            FROM public.content_rejects AS r
            WHERE r.run_id = p_run_id
            GROUP BY r.content_type
        )
        SELECT format('%s %s could not be stored: %s', sum(t.objects),
                      CASE WHEN sum(t.objects) = 1 THEN 'object' ELSE 'objects' END,
                      string_agg(format('%s %s (%s%s)', t.content_type, t.objects, t.reason,
                                        CASE WHEN t.reasons > 1
                                             THEN format('; and %s other reason%s',
                                                         t.reasons - 1,
                                                         CASE WHEN t.reasons > 2 THEN 's'
                                                              ELSE '' END)
                                             ELSE '' END),
                                 ', ' ORDER BY t.objects DESC, t.content_type))
        FROM by_type AS t
        HAVING count(*) > 0);
    END
    $$;
REVOKE ALL ON FUNCTION public.run_rejects_note(p_run_id bigint) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.run_rejects_note(p_run_id bigint) TO smuves_app;

-- Stop run p_run_id, whoever asks (its callers decide who may): its pending and running jobs
-- become stopped, with p_reason as their error unless they have one (lease columns kept as
-- the record of who ran them), then the run is settled like any other (a stopped job makes
-- it stopped). Jobs are locked before the run, the order claim_jobs and complete_jobs use, so
-- a concurrent claim or finish cannot deadlock with a stop. Returns the run as it is
-- afterwards; no row: no such run. Written once for stop_run (a tenant, through the API) and
-- the operators' dashboard (the login role, any run).
CREATE OR REPLACE FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
    BEGIN
        -- Lock the open jobs in id order before updating them: two stops of one run then
        -- queue up behind each other instead of locking jobs in opposite orders (deadlock).
        PERFORM FROM public.jobs AS j
        WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running')
        ORDER BY j.id
        FOR UPDATE;

        UPDATE public.jobs AS j
        SET status = 'stopped',
            finished_at = v_now,
            last_error = coalesce(j.last_error, p_reason),
            last_error_public = coalesce(j.last_error_public, p_reason)
        WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running');

        PERFORM public.settle_runs(ARRAY[p_run_id], v_now);
        RETURN QUERY SELECT * FROM public.runs AS r WHERE r.id = p_run_id;
    END
    $$;
REVOKE ALL ON FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Tell the owners of runs p_runs, just settled (settle_locked_runs, the one place a run
-- settles), how each ended: a notice of every run that completed, partially failed or failed
-- (none of a stopped one: someone stopped it), saying how many of its jobs completed, which
-- types failed and why, and what content HubSpot sent that was kept out (run_failures_note,
-- only when a job failed, and run_rejects_note, only when something was).
-- Called by the settling itself rather than by a trigger on runs: a statement trigger fired for
-- every update of runs, every claim starting its runs among them. Not granted, no SECURITY
-- DEFINER, no SET clause, as settle_locked_runs: it runs inside the queue's functions, whose
-- search_path is pinned, with their rights.
CREATE OR REPLACE FUNCTION public.notify_settled_runs(p_runs public.runs[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
    BEGIN
        PERFORM public.notify_run_owners(ARRAY(
            SELECT ROW(n.id, 'run_' || n.status,
                       pg_catalog.format(
                           '%s run %s of portal %s %s: %s of %s job(s) completed%s%s%s',
                           CASE n.kind WHEN 'fetch' THEN 'Fetch' WHEN 'push' THEN 'Push' ELSE 'Export' END,
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
            FROM unnest(p_runs) AS n
            CROSS JOIN LATERAL (
                SELECT count(*) AS total,
                       count(*) FILTER (WHERE j.status = 'completed') AS completed,
                       string_agg(j.content_type::text, ', ' ORDER BY j.content_type::text)
                           FILTER (WHERE j.status = 'failed') AS failed
                FROM public.jobs AS j WHERE j.run_id = n.id
            ) AS c
            CROSS JOIN LATERAL (SELECT CASE WHEN c.failed IS NOT NULL
                                            THEN public.run_failures_note(n.id) END AS note) AS w
            -- asked only of a run that kept something out (a probe of content_rejects_run_idx):
            -- most runs store everything, and its SET clause costs a call some 20 µs, a third
            -- of a notice
            CROSS JOIN LATERAL (SELECT CASE WHEN EXISTS (SELECT FROM public.content_rejects AS r
                                                        WHERE r.run_id = n.id)
                                            THEN public.run_rejects_note(n.id) END AS note) AS x
            WHERE n.status IN ('completed', 'partially_failed', 'failed')
            ORDER BY n.id));
    END
    $$;
REVOKE ALL ON FUNCTION public.notify_settled_runs(p_runs public.runs[]) FROM PUBLIC, smuves_app, smuves_worker;

-- Whether run p_run_id has no job pending or running (a run without jobs counts as finished:
-- settling leaves it alone, having nothing to count). One SQL statement, STABLE, no SET, not
-- SECURITY DEFINER, as job_within_portal_cap: used as `(SELECT * FROM public.run_finished(…))`
-- the planner writes it into the caller's statement, a probe of jobs_run_idx.
CREATE OR REPLACE FUNCTION public.run_finished(p_run_id bigint) RETURNS SETOF boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT NOT EXISTS (SELECT FROM public.jobs AS j
                           WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running'))
    $$;
REVOKE ALL ON FUNCTION public.run_finished(p_run_id bigint) FROM PUBLIC, smuves_app, smuves_worker;

-- settle_runs without its locks: the caller has locked the runs p_run_ids that are
-- pending or running FOR NO KEY UPDATE (in id order, after its job rows), so that the
-- count below sees every job change committed before it could lock them. A run with a job
-- still open is left as it is; most completions finish one job of a run that has others, so
-- the probe for a finished run comes first, alone, and the counting and the update (with
-- the runs' trigger) only when it finds one. Not granted: it runs inside settle_runs and
-- claim_jobs. No SECURITY DEFINER, no SET clause (as settle_runs): it runs only inside the
-- queue's functions, whose search_path is pinned, with their rights, and a completion calls
-- it for every batch, where switching the user and the settings on each call cost as much as
-- the probe.
CREATE OR REPLACE FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_finished bigint[];
        v_settled public.runs[];
    BEGIN
        v_finished := ARRAY(SELECT given.id FROM unnest(p_run_ids) AS given (id)
                            WHERE (SELECT * FROM public.run_finished(given.id)));
        IF cardinality(v_finished) = 0 THEN
            RETURN;
        END IF;
        WITH counts AS (
            SELECT j.run_id,
                   count(*) AS total,
                   count(*) FILTER (WHERE j.status IN ('pending', 'running')) AS open,
                   count(*) FILTER (WHERE j.status = 'completed') AS completed,
                   count(*) FILTER (WHERE j.status = 'failed') AS failed,
                   count(*) FILTER (WHERE j.status = 'stopped') AS stopped
            FROM public.jobs AS j
            WHERE j.run_id = ANY (v_finished)
            GROUP BY j.run_id
        ), settled AS (
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
            RETURNING r AS run
        )
        SELECT array_agg(s.run ORDER BY (s.run).id) INTO v_settled FROM settled AS s;
        IF v_settled IS NOT NULL THEN
            PERFORM public.notify_settled_runs(v_settled);
        END IF;
        RETURN QUERY SELECT * FROM unnest(v_settled);
    END
    $$;
REVOKE ALL ON FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Settle runs whose jobs are all finished:
--   any job still pending/running  -> unchanged
--   any job stopped                -> stopped (someone stopped the run; that wins)
--   every job completed            -> completed
--   every job failed               -> failed
--   otherwise                      -> partially_failed
-- Runs without jobs are left alone. The run rows are locked (in id order) first, then
-- settled by settle_locked_runs, whose count sees every job change committed before the
-- lock was granted: two workers finishing a run's last two jobs at once cannot both miss the
-- end. A fair claim takes one job of many runs, so each run is looked at only until an open
-- job of it turns up. Runs inside the queue's and the runs' functions only (not granted), with
-- their pinned search_path and rights: no SECURITY DEFINER, no SET clause.
CREATE OR REPLACE FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
    BEGIN
        PERFORM 1 FROM public.runs AS r
        WHERE r.id = ANY (p_run_ids) AND r.status IN ('pending', 'running')
        ORDER BY r.id
        FOR NO KEY UPDATE;

        -- most calls finish one job of a run that has more: the probe alone, then
        IF EXISTS (SELECT FROM unnest(p_run_ids) AS given (id)
                   WHERE (SELECT * FROM public.run_finished(given.id))) THEN
            RETURN QUERY SELECT * FROM public.settle_locked_runs(p_run_ids, v_now);
        END IF;
    END
    $$;
REVOKE ALL ON FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;

-- Stop run p_run_id (run_to_stopped) if it belongs to one of the caller's portals and the
-- caller is an owner or editor there. Returns the run as it is afterwards; no row: not
-- visible. A viewer is refused (portal_app_editor) and nothing changes.
CREATE OR REPLACE FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_portal_id bigint;
    BEGIN
        -- The definer sees every row: check the caller's membership explicitly.
        SELECT r.portal_id INTO v_portal_id FROM public.runs AS r
        WHERE r.id = p_run_id AND r.portal_id IN (SELECT public.member_portal_ids());
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF v_portal_id NOT IN (SELECT public.editor_portal_ids()) THEN
            RAISE EXCEPTION 'stop_run: only the owners and editors of portal % may stop its '
                            'runs; a viewer may only read', v_portal_id
                USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
        END IF;
        RETURN QUERY SELECT * FROM public.run_to_stopped(p_run_id, 'stopped on request', p_now);
    END
    $$;
REVOKE ALL ON FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone) TO smuves_app;
