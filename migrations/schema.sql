--
-- PostgreSQL database dump
--



SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: content_event; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.content_event AS text
	CONSTRAINT content_event_known CHECK ((VALUE = ANY (ARRAY['created'::text, 'updated'::text, 'archived'::text, 'unarchived'::text, 'deleted'::text, 'restored'::text])));


ALTER DOMAIN public.content_event OWNER TO smuves_owner;

--
-- Name: content_type; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.content_type AS text;


ALTER DOMAIN public.content_type OWNER TO smuves_owner;

--
-- Name: export_format; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.export_format AS text
	CONSTRAINT export_format_known CHECK ((VALUE = ANY (ARRAY['csv'::text, 'jsonl'::text])));


ALTER DOMAIN public.export_format OWNER TO smuves_owner;

--
-- Name: job_kind; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.job_kind AS text
	CONSTRAINT job_kind_known CHECK ((VALUE = ANY (ARRAY['fetch'::text, 'export'::text, 'push'::text])));


ALTER DOMAIN public.job_kind OWNER TO smuves_owner;

--
-- Name: job_status; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.job_status AS text
	CONSTRAINT job_status_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'running'::text, 'completed'::text, 'failed'::text, 'stopped'::text])));


ALTER DOMAIN public.job_status OWNER TO smuves_owner;

--
-- Name: member_role; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.member_role AS text
	CONSTRAINT member_role_known CHECK ((VALUE = ANY (ARRAY['owner'::text, 'editor'::text, 'viewer'::text])));


ALTER DOMAIN public.member_role OWNER TO smuves_owner;

--
-- Name: run_notice; Type: TYPE; Schema: public; Owner: smuves_owner
--

CREATE TYPE public.run_notice AS (
	run_id bigint,
	kind text,
	message text,
	created_at timestamp with time zone
);


ALTER TYPE public.run_notice OWNER TO smuves_owner;

--
-- Name: run_status; Type: DOMAIN; Schema: public; Owner: smuves_owner
--

CREATE DOMAIN public.run_status AS text
	CONSTRAINT run_status_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'running'::text, 'completed'::text, 'partially_failed'::text, 'failed'::text, 'stopped'::text])));


ALTER DOMAIN public.run_status OWNER TO smuves_owner;

--
-- Name: advance_due_schedule(bigint, timestamp with time zone, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
    BEGIN
        IF p_next_run_at IS NULL OR p_next_run_at <= v_now
           OR p_last_run_at > v_now THEN
            RAISE EXCEPTION 'advance_due_schedule: the next time (%) must be after now (%) and '
                            'the last one (%) not after it', p_next_run_at, v_now, p_last_run_at
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        UPDATE public.schedules AS s
        SET next_run_at = p_next_run_at,
            last_run_at = coalesce(p_last_run_at, s.last_run_at)
        WHERE s.id = p_schedule_id AND public.schedule_is_due(s, v_now);
        RETURN FOUND;
    END
    $$;


ALTER FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: app_user_sign_in(text, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.app_user_sign_in(p_email text DEFAULT NULL::text, p_email_verified boolean DEFAULT false) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
    DECLARE
        v_id uuid := public.current_app_user();
        v_email text := CASE WHEN p_email_verified AND btrim(p_email) ~ '^[^@\s]+@[^@\s]+$'
                             THEN lower(btrim(p_email)) END;
        v_current text;
    BEGIN
        IF v_id IS NULL THEN
            RAISE EXCEPTION 'app_user_sign_in: app.user_id is not set'
                USING ERRCODE = 'insufficient_privilege';
        END IF;

        SELECT u.email INTO v_current FROM public.app_users AS u WHERE u.id = v_id;
        IF FOUND THEN
            -- The common case: a known user, nothing to write.
            IF v_email IS NOT NULL AND v_email IS DISTINCT FROM v_current
               AND NOT EXISTS (SELECT FROM public.app_users AS u WHERE u.email = v_email) THEN
                BEGIN
                    UPDATE public.app_users AS u SET email = v_email, invited = false
                    WHERE u.id = v_id;
                EXCEPTION WHEN unique_violation THEN
                    NULL;  -- another account took that email a moment ago: keep ours
                END;
            END IF;
            RETURN v_id;
        END IF;

        IF v_email IS NOT NULL THEN
            -- Invited by the operator: the row becomes this user's (its portals, memberships,
            -- runs, schedules and notifications follow the id). A concurrent first request of
            -- the same user waits for the row lock, then finds it taken and goes on below.
            UPDATE public.app_users AS u SET id = v_id, invited = false
            WHERE u.email = v_email AND u.invited;
            IF FOUND THEN
                RETURN v_id;
            END IF;
        END IF;

        -- DO NOTHING without a target: neither a concurrent first request of the same user
        -- (id) nor another account with this email (email) raises.
        INSERT INTO public.app_users (id, email)
        VALUES (v_id, coalesce(v_email, v_id::text || '@users.invalid'))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            INSERT INTO public.app_users (id, email)
            VALUES (v_id, v_id::text || '@users.invalid')
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN v_id;
    END
    $_$;


ALTER FUNCTION public.app_user_sign_in(p_email text, p_email_verified boolean) OWNER TO smuves_owner;

--
-- Name: changeset_push_begin(bigint, bigint, text); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_changeset public.changesets;
        v_run public.runs;
    BEGIN
        SELECT * INTO v_changeset FROM public.changesets AS c WHERE c.id = p_changeset_id
        FOR UPDATE;
        IF NOT FOUND OR NOT (public.operator_session()
                             OR v_changeset.portal_id IN (SELECT public.member_portal_ids())) THEN
            RETURN NULL;
        END IF;
        IF NOT public.operator_session()
           AND v_changeset.portal_id NOT IN (SELECT public.editor_portal_ids()) THEN
            RAISE EXCEPTION 'changeset_push_begin: only the owners and editors of portal % may '
                            'push its changesets; a viewer may only read', v_changeset.portal_id
                USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
        END IF;
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND OR v_run.kind <> 'push' OR v_run.portal_id <> v_changeset.portal_id THEN
            RAISE EXCEPTION 'changeset_push_begin: run % is no push of portal %',
                            p_run_id, v_changeset.portal_id
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF v_changeset.status = 'pushing' THEN
            RETURN v_changeset.status;
        END IF;
        UPDATE public.changesets AS c
        SET status = 'pushing', run_id = p_run_id, publish = p_publish
        WHERE c.id = p_changeset_id;
        RETURN v_changeset.status;
    END
    $$;


ALTER FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) OWNER TO smuves_owner;

--
-- Name: changesets_follow_push(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.changesets_follow_push() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        SELECT c.id INTO v_id FROM public.changesets AS c
        WHERE c.run_id = NEW.run_id AND c.portal_id = NEW.portal_id AND c.status = 'pushing'
        FOR UPDATE;
        IF NOT FOUND OR EXISTS (SELECT FROM public.jobs AS j
                                WHERE j.run_id = NEW.run_id AND j.id <> NEW.id
                                  AND j.status IN ('pending', 'running')) THEN
            RETURN NULL;
        END IF;
        UPDATE public.changesets AS c
        SET status = CASE WHEN EXISTS (SELECT FROM public.jobs AS j
                                       WHERE j.run_id = NEW.run_id
                                         AND j.status <> 'completed')
                          THEN 'draft' ELSE 'pushed' END,
            pushed_at = now()
        WHERE c.id = v_id;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.changesets_follow_push() OWNER TO smuves_owner;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: jobs; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.jobs (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    kind public.job_kind NOT NULL,
    content_type public.content_type NOT NULL,
    status public.job_status DEFAULT 'pending'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 3 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    locked_at timestamp with time zone,
    locked_by text,
    lease_token uuid,
    heartbeat_at timestamp with time zone,
    total bigint,
    processed bigint DEFAULT 0 NOT NULL,
    cursor text,
    last_error text,
    last_error_public text,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    priority smallint DEFAULT 0 NOT NULL,
    fair_at timestamp with time zone,
    CONSTRAINT jobs_attempts_nonnegative CHECK ((attempts >= 0)),
    CONSTRAINT jobs_max_attempts_positive CHECK ((max_attempts >= 1)),
    CONSTRAINT jobs_processed_nonnegative CHECK ((processed >= 0)),
    CONSTRAINT jobs_running_has_lease CHECK ((((status)::text <> 'running'::text) OR ((lease_token IS NOT NULL) AND (locked_at IS NOT NULL) AND (heartbeat_at IS NOT NULL)))),
    CONSTRAINT jobs_total_nonnegative CHECK ((total >= 0))
)
WITH (autovacuum_vacuum_scale_factor='0.02', autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_cost_delay='0');

ALTER TABLE ONLY public.jobs FORCE ROW LEVEL SECURITY;


ALTER TABLE public.jobs OWNER TO smuves_owner;

--
-- Name: checkpoint_job(bigint, uuid, text, bigint, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        UPDATE public.jobs AS j
        SET cursor = p_cursor,
            processed = p_processed,
            total = coalesce(p_total, j.total),
            heartbeat_at = public.effective_now(p_now)
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;


ALTER FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: schedules; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.schedules (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    owner_id uuid,
    cron_expression text NOT NULL,
    content_types public.content_type[] NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    next_run_at timestamp with time zone,
    last_run_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT schedules_content_types_present CHECK ((cardinality(content_types) > 0))
);

ALTER TABLE ONLY public.schedules FORCE ROW LEVEL SECURITY;


ALTER TABLE public.schedules OWNER TO smuves_owner;

--
-- Name: claim_due_schedule(bigint[], timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.claim_due_schedule(p_skip bigint[] DEFAULT '{}'::bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.schedules
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT s.* FROM public.schedules AS s
        WHERE s.enabled
          AND (s.next_run_at IS NULL OR s.next_run_at <= public.effective_now(p_now))
          AND s.id <> ALL (coalesce(p_skip, '{}'))
        ORDER BY s.next_run_at NULLS FIRST, s.id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    $$;


ALTER FUNCTION public.claim_due_schedule(p_skip bigint[], p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: claim_jobs(text, text[], integer, timestamp with time zone, bigint, integer, bigint[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_run_id bigint DEFAULT NULL::bigint, p_portal_max_running integer DEFAULT 5, p_settle_run_ids bigint[] DEFAULT NULL::bigint[]) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_fetch_lease interval;
        v_export_lease interval;
        v_push_lease interval;
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
               max(l.lease) FILTER (WHERE l.kind = 'export'),
               max(l.lease) FILTER (WHERE l.kind = 'push')
        INTO v_fetch_lease, v_export_lease, v_push_lease
        FROM public.job_leases AS l;

        -- Leases rarely expire: one probe of jobs_lease_idx says whether any did.
        IF EXISTS (SELECT FROM public.jobs AS j
                   WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
                     AND (p_run_id IS NULL OR j.run_id = p_run_id)) THEN
            WITH stale AS (
                SELECT j.id FROM public.jobs AS j
                WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
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
            WHERE public.job_lease_expired(j, v_now, v_fetch_lease, v_export_lease, v_push_lease)
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
        -- returned as the statement makes them: gathered into a jobs[] first, each row went
        -- through text (the CTE's row type is not jobs), a tenth of a batch's claim. A SELECT
        -- in WITH runs only as far as it is read, and started, its other reader, joins it to
        -- claimed: a claim that took no job would never read it, and would settle the runs
        -- without their locks (two workers finishing a run's last jobs at once would each
        -- count the other's as running). Counted here, whole, before claimed is returned, it
        -- locks them whatever was claimed.
        SELECT * FROM claimed
        WHERE (SELECT count(*) FROM locked_runs) >= 0
        ORDER BY claimed.id;

        IF v_settle IS NOT NULL THEN
            -- locked by the claim's pass over runs above, but for those with a claimed job,
            -- which cannot settle (that job is running: settle_locked_runs passes them over)
            PERFORM public.settle_locked_runs(v_settle, v_now);
        END IF;
    END
    $$;


ALTER FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]) OWNER TO smuves_owner;

--
-- Name: claim_next_job(text, text[], timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_portal_max_running integer DEFAULT 5) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT * FROM public.claim_jobs(p_worker, p_kinds, 1, p_now, NULL,
                                           p_portal_max_running)
    $$;


ALTER FUNCTION public.claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone, p_portal_max_running integer) OWNER TO smuves_owner;

--
-- Name: complete_job(bigint, uuid, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT * FROM public.complete_jobs(
            ARRAY[p_job_id], ARRAY[p_lease_token], ARRAY[p_processed], p_now)
    $$;


ALTER FUNCTION public.complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: complete_jobs(bigint[], uuid[], bigint[], timestamp with time zone, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[] DEFAULT NULL::bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_settle boolean DEFAULT true) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_done bigint;
        v_job public.jobs;
    BEGIN
        IF cardinality(p_job_ids) IS DISTINCT FROM cardinality(p_lease_tokens)
           OR (p_processed IS NOT NULL
               AND cardinality(p_processed) IS DISTINCT FROM cardinality(p_job_ids)) THEN
            RAISE EXCEPTION 'complete_jobs: ids, lease tokens and processed counts differ in length'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;

        IF cardinality(p_job_ids) = 1 THEN
            UPDATE public.jobs AS j
            SET status = 'completed',
                finished_at = v_now,
                processed = coalesce(p_processed[1], j.processed)
            WHERE j.id = p_job_ids[1] AND j.lease_token = p_lease_tokens[1]
              AND j.status = 'running'
            RETURNING j.* INTO v_job;
            IF FOUND THEN
                RETURN NEXT v_job;
                IF p_settle THEN
                    PERFORM public.settle_runs(ARRAY[v_job.run_id], v_now);
                END IF;
            END IF;
            RETURN;
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


ALTER FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean) OWNER TO smuves_owner;

--
-- Name: content_history_begin(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_begin() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        NEW.version := 1;
        NEW.first_version_run := (
            SELECT r.run_id FROM public.content_history_run(NEW.portal_id, NEW.content_type) AS r);
        RETURN NEW;
    END
    $$;


ALTER FUNCTION public.content_history_begin() OWNER TO smuves_owner;

--
-- Name: content_versions; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.content_versions (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    version integer NOT NULL,
    event public.content_event NOT NULL,
    hash text,
    document jsonb,
    seen_from_run bigint,
    seen_until_run bigint,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    superseded_at timestamp with time zone,
    id bigint NOT NULL,
    changeset_id bigint,
    CONSTRAINT content_versions_version_positive CHECK ((version > 0))
);
ALTER TABLE ONLY public.content_versions ALTER COLUMN document SET COMPRESSION lz4;

ALTER TABLE ONLY public.content_versions FORCE ROW LEVEL SECURITY;


ALTER TABLE public.content_versions OWNER TO smuves_owner;

--
-- Name: content_versions_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_versions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.content_versions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: content_items; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.content_items (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    name text,
    slug text,
    url text,
    state text,
    language text,
    hubspot_updated_at timestamp with time zone,
    archived boolean DEFAULT false NOT NULL,
    deleted_at timestamp with time zone,
    data jsonb NOT NULL,
    content_hash text,
    first_seen_run bigint,
    changed_run bigint,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    translated_from_id text,
    version integer NOT NULL,
    first_version_id bigint DEFAULT nextval('public.content_versions_id_seq'::regclass),
    first_version_run bigint,
    first_version_at timestamp with time zone DEFAULT now(),
    CONSTRAINT content_items_hubspot_id_present CHECK ((hubspot_id <> ''::text)),
    CONSTRAINT content_items_version_positive CHECK ((version > 0))
)
WITH (fillfactor='80', toast_tuple_target='4080');
ALTER TABLE ONLY public.content_items ALTER COLUMN data SET COMPRESSION lz4;

ALTER TABLE ONLY public.content_items FORCE ROW LEVEL SECURITY;


ALTER TABLE public.content_items OWNER TO smuves_owner;

--
-- Name: content_history_end(public.content_items, bigint, boolean, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_version integer;
        v_document jsonb;
    BEGIN
        IF p_leaves AND NOT EXISTS (
            SELECT FROM public.content_versions AS d
            WHERE d.portal_id = p_row.portal_id AND d.content_type = p_row.content_type
              AND d.hubspot_id = p_row.hubspot_id AND d.hash = p_row.content_hash
              AND d.document IS NOT NULL)
        THEN
            v_document := p_row.data;
        END IF;
        IF p_row.version = 1 AND p_row.first_version_id IS NOT NULL THEN
            INSERT INTO public.content_versions
                (portal_id, content_type, hubspot_id, version, event, hash, document,
                 seen_from_run, seen_until_run, recorded_at, superseded_at, id)
            OVERRIDING SYSTEM VALUE
            VALUES (p_row.portal_id, p_row.content_type, p_row.hubspot_id, 1,
                    CASE WHEN p_row.deleted_at IS NULL THEN 'created' ELSE 'deleted' END,
                    p_row.content_hash, v_document, p_row.first_version_run,
                    CASE WHEN p_ends THEN p_run END, p_row.first_version_at,
                    CASE WHEN p_ends THEN now() END, p_row.first_version_id);
            RETURN 1;
        END IF;

        UPDATE public.content_versions AS v
        SET superseded_at = CASE WHEN p_ends THEN now() END,
            seen_until_run = CASE WHEN p_ends THEN p_run END,
            document = coalesce(v.document, v_document)
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id AND v.superseded_at IS NULL
          AND v.hash IS NOT DISTINCT FROM p_row.content_hash
        RETURNING v.version INTO v_version;
        IF FOUND OR NOT p_ends THEN
            RETURN coalesce(v_version, p_row.version);
        END IF;

        -- The history does not end with the stored row: it was written while no history was
        -- kept (triggers disabled, versions removed by hand). Close whatever is open and
        -- record the stored row as a version of its own, with its document, so that nothing
        -- stored is lost and the numbering goes on.
        UPDATE public.content_versions AS v
        SET superseded_at = now(), seen_until_run = p_run
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id AND v.superseded_at IS NULL;
        SELECT greatest(coalesce(max(v.version), 0) + 1, p_row.version) INTO v_version
        FROM public.content_versions AS v
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id;
        INSERT INTO public.content_versions AS v
            (portal_id, content_type, hubspot_id, version, event, hash, document,
             seen_until_run, superseded_at)
        VALUES (p_row.portal_id, p_row.content_type, p_row.hubspot_id, v_version,
                CASE WHEN v_version = 1 THEN 'created' ELSE 'updated' END, p_row.content_hash,
                CASE WHEN p_leaves THEN p_row.data END, p_run, now());
        RETURN v_version;
    END
    $$;


ALTER FUNCTION public.content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean) OWNER TO smuves_owner;

--
-- Name: content_history_event(boolean, boolean, boolean, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
        SELECT CASE
            WHEN p_new_deleted AND NOT p_old_deleted THEN 'deleted'
            WHEN p_old_deleted AND NOT p_new_deleted THEN 'restored'
            WHEN p_new_archived AND NOT p_old_archived THEN 'archived'
            WHEN p_old_archived AND NOT p_new_archived THEN 'unarchived'
            ELSE 'updated'
        END
    $$;


ALTER FUNCTION public.content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean) OWNER TO smuves_owner;

--
-- Name: content_history_inserted(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        -- The common case, checked first and cheaply: new objects, numbered 1, of the run in
        -- flight (one look-up per portal, type and run named), with no history yet.
        PERFORM FROM (SELECT DISTINCT n.portal_id, n.content_type, n.first_version_run,
                             n.version = 1 AS first
                      FROM new_rows AS n) AS k
        WHERE NOT k.first
           OR k.first_version_run IS DISTINCT FROM (
                  SELECT f.run_id
                  FROM public.content_history_run(k.portal_id, k.content_type) AS f);
        IF NOT FOUND AND NOT EXISTS (
            SELECT FROM new_rows AS n
            WHERE EXISTS (SELECT FROM public.content_versions AS v
                          WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                            AND v.hubspot_id = n.hubspot_id))
        THEN
            RETURN NULL;
        END IF;
        WITH runs AS MATERIALIZED (
            SELECT k.portal_id, k.content_type,
                   (SELECT f.run_id
                    FROM public.content_history_run(k.portal_id, k.content_type) AS f) AS run_id
            FROM (SELECT DISTINCT n.portal_id, n.content_type FROM new_rows AS n) AS k
        ),
        added AS MATERIALIZED (
            SELECT n.portal_id, n.content_type, n.hubspot_id, n.content_hash,
                   n.deleted_at IS NOT NULL AS deleted, n.version, n.first_version_run,
                   r.run_id, l.version AS last_version
            FROM new_rows AS n
            JOIN runs AS r ON r.portal_id = n.portal_id AND r.content_type = n.content_type
            LEFT JOIN LATERAL (
                SELECT v.version FROM public.content_versions AS v
                WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                  AND v.hubspot_id = n.hubspot_id
                ORDER BY v.version DESC
                LIMIT 1
            ) AS l ON true
        ),
        closed AS (
            UPDATE public.content_versions AS v
            SET superseded_at = now(), seen_until_run = a.run_id
            FROM added AS a
            WHERE a.last_version IS NOT NULL
              AND v.portal_id = a.portal_id AND v.content_type = a.content_type
              AND v.hubspot_id = a.hubspot_id AND v.superseded_at IS NULL
        ),
        corrected AS (
            UPDATE public.content_items AS c
            SET version = coalesce(a.last_version + 1, 1), first_version_run = a.run_id
            FROM added AS a
            WHERE (a.version <> coalesce(a.last_version + 1, 1)
                   OR a.first_version_run IS DISTINCT FROM a.run_id)
              AND c.portal_id = a.portal_id AND c.content_type = a.content_type
              AND c.hubspot_id = a.hubspot_id
        )
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        SELECT a.portal_id, a.content_type, a.hubspot_id, a.last_version + 1,
               CASE WHEN a.deleted THEN 'deleted' ELSE 'restored' END, a.content_hash, a.run_id
        FROM added AS a
        WHERE a.last_version IS NOT NULL;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.content_history_inserted() OWNER TO smuves_owner;

--
-- Name: content_history_removed(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_removed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        o public.content_items;
        v_run bigint;
        v_version integer;
    BEGIN
        FOR o IN
            SELECT r.* FROM old_rows AS r
            WHERE EXISTS (SELECT FROM public.portals AS p WHERE p.id = r.portal_id)
        LOOP
            SELECT r.run_id INTO v_run
            FROM public.content_history_run(o.portal_id, o.content_type) AS r;
            IF o.deleted_at IS NULL THEN
                v_version := public.content_history_end(o, v_run, true, true);
                INSERT INTO public.content_versions
                    (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
                VALUES (o.portal_id, o.content_type, o.hubspot_id, v_version + 1, 'deleted',
                        o.content_hash, v_run);
            ELSE
                -- Already marked deleted: its last version stays the current one, and takes
                -- the document if no version holds it.
                PERFORM public.content_history_end(o, v_run, false, true);
            END IF;
        END LOOP;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.content_history_removed() OWNER TO smuves_owner;

--
-- Name: content_history_run(bigint, text); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) RETURNS TABLE(run_id bigint)
    LANGUAGE sql STABLE
    AS $$
        SELECT j.run_id FROM public.jobs AS j
        WHERE j.portal_id = p_portal_id AND j.kind = 'fetch'
          AND j.content_type = p_content_type AND j.status IN ('pending', 'running')
    $$;


ALTER FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) OWNER TO smuves_owner;

--
-- Name: content_history_updated(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_history_updated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_run bigint;
        v_version integer;
    BEGIN
        SELECT r.run_id INTO v_run
        FROM public.content_history_run(NEW.portal_id, NEW.content_type) AS r;
        v_version := public.content_history_end(
            OLD, v_run, true, OLD.content_hash IS DISTINCT FROM NEW.content_hash);
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        VALUES (NEW.portal_id, NEW.content_type, NEW.hubspot_id, v_version + 1,
                public.content_history_event(OLD.archived, OLD.deleted_at IS NOT NULL,
                                             NEW.archived, NEW.deleted_at IS NOT NULL),
                NEW.content_hash, v_run);
        NEW.version := v_version + 1;
        RETURN NEW;
    END
    $$;


ALTER FUNCTION public.content_history_updated() OWNER TO smuves_owner;

--
-- Name: content_insert_new_page(bigint, text, bigint, text, json, text[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_inserted integer;
        v_constraint text;
    BEGIN
        IF EXISTS (SELECT FROM public.content_items AS c
                   WHERE c.portal_id = p_portal_id AND c.content_type = p_content_type
                     AND c.hubspot_id = p_first_id) THEN
            RETURN NULL;
        END IF;
        INSERT INTO public.content_items
            (portal_id, content_type, hubspot_id, name, slug, url, state, language,
             hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
             changed_run, changed_at, translated_from_id, version, first_version_run)
        SELECT p_portal_id, p_content_type, r.i, r.n, r.s, r.u, r.st, r.l, r.t, r.a, NULL,
               r.document::jsonb, r.h, p_run_id, p_run_id, now(), r.tr, 1,
               (SELECT f.run_id FROM public.content_history_run(p_portal_id, p_content_type) AS f)
        FROM ROWS FROM (
                 json_to_recordset(p_fields)
                     AS (i text, n text, s text, u text, st text, l text, t timestamptz,
                         a boolean, tr text, h text),
                 unnest(p_documents))
             AS r (i, n, s, u, st, l, t, a, tr, h, document);
        GET DIAGNOSTICS v_inserted = ROW_COUNT;
        RETURN v_inserted;
    EXCEPTION WHEN unique_violation THEN
        GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
        IF v_constraint IS DISTINCT FROM 'content_items_pkey' THEN
            RAISE;
        END IF;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) OWNER TO smuves_owner;

--
-- Name: content_items_portal_exists(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_items_portal_exists() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        IF TG_LEVEL = 'ROW' THEN
            PERFORM public.content_portals_lock(ARRAY[NEW.portal_id]);
        ELSE
            PERFORM public.content_portals_lock(
                ARRAY(SELECT DISTINCT n.portal_id FROM new_rows AS n));
        END IF;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.content_items_portal_exists() OWNER TO smuves_owner;

--
-- Name: content_portals_lock(bigint[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_portals_lock(p_ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_found bigint;
    BEGIN
        PERFORM FROM public.portals AS p WHERE p.id = ANY (p_ids) FOR KEY SHARE;
        GET DIAGNOSTICS v_found = ROW_COUNT;
        IF v_found < cardinality(p_ids) THEN
            RAISE EXCEPTION 'content_items names a portal that does not exist'
                USING ERRCODE = 'foreign_key_violation',
                      CONSTRAINT = 'content_items_portal_exists';
        END IF;
    END
    $$;


ALTER FUNCTION public.content_portals_lock(p_ids bigint[]) OWNER TO smuves_owner;

--
-- Name: content_types_constrain_domain(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_types_constrain_domain() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        ALTER DOMAIN public.content_type DROP CONSTRAINT IF EXISTS content_type_known;
        EXECUTE pg_catalog.format(
            'ALTER DOMAIN public.content_type ADD CONSTRAINT content_type_known '
            'CHECK (VALUE IN (%s)) NOT VALID',
            (SELECT string_agg(pg_catalog.quote_literal(t.name), ', ' ORDER BY t.name)
             FROM public.content_types AS t));
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.content_types_constrain_domain() OWNER TO smuves_owner;

--
-- Name: content_types_only_grow(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.content_types_only_grow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RAISE EXCEPTION 'content types are only ever added (% refused): rows of every type '
                        'ever listed stay valid', TG_OP
            USING ERRCODE = 'feature_not_supported';
    END
    $$;


ALTER FUNCTION public.content_types_only_grow() OWNER TO smuves_owner;

--
-- Name: current_app_portal(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.current_app_portal() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.portal_id', true), '')::bigint $$;


ALTER FUNCTION public.current_app_portal() OWNER TO smuves_owner;

--
-- Name: current_app_user(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.current_app_user() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.user_id', true), '')::uuid $$;


ALTER FUNCTION public.current_app_user() OWNER TO smuves_owner;

--
-- Name: disable_due_schedule(bigint, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        WITH disabled AS (
            UPDATE public.schedules AS s SET enabled = false
            WHERE s.id = p_schedule_id AND public.schedule_is_due(s, public.effective_now(p_now))
            RETURNING s.id, s.portal_id, s.owner_id
        ), told AS (
            INSERT INTO public.notifications (user_id, schedule_id, kind, message)
            SELECT coalesce(d.owner_id, p.owner_id), d.id, 'schedule_disabled', p_message
            FROM disabled AS d JOIN public.portals AS p ON p.id = d.portal_id
            WHERE coalesce(d.owner_id, p.owner_id) IS NOT NULL
            RETURNING 1
        )
        SELECT CASE WHEN EXISTS (SELECT FROM disabled) THEN EXISTS (SELECT FROM told) END
    $$;


ALTER FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: editor_portal_ids(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.editor_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user() AND m.role IN ('owner', 'editor')
        UNION
        SELECT p.id FROM public.portals AS p WHERE p.owner_id = public.current_app_user()
    $$;


ALTER FUNCTION public.editor_portal_ids() OWNER TO smuves_owner;

--
-- Name: effective_now(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.effective_now(p_now timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $$
    BEGIN
        IF p_now IS NULL THEN
            RETURN pg_catalog.now();
        END IF;
        IF public.operator_session() THEN
            RETURN p_now;
        END IF;
        RAISE EXCEPTION 'only the operator''s login may pass a time (p_now); the API and '
                        'the workers run on the database''s clock'
            USING ERRCODE = 'insufficient_privilege';
    END
    $$;


ALTER FUNCTION public.effective_now(p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: enqueue_job(bigint, text, smallint, integer, timestamp with time zone, bigint, text, bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint DEFAULT 0, p_max_attempts integer DEFAULT 3, p_run_after timestamp with time zone DEFAULT NULL::timestamp with time zone, p_total bigint DEFAULT NULL::bigint, p_idempotency_key text DEFAULT NULL::text, p_schedule_id bigint DEFAULT NULL::bigint) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_run public.runs;
        v_operator boolean := public.operator_session();
        v_run_after timestamptz := coalesce(p_run_after, now());
        v_priority smallint := coalesce(p_priority, 0);
        v_ahead bigint;
        v_busy bigint;
    BEGIN
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        IF NOT v_operator THEN
            v_run_after := greatest(v_run_after, now());
            IF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
               AND v_run.portal_id IN (SELECT public.editor_portal_ids()) THEN
                v_priority := least(v_priority, 20);
            ELSIF pg_catalog.pg_has_role(session_user, 'smuves_app', 'USAGE')
                  AND v_run.portal_id IN (SELECT public.member_portal_ids()) THEN
                RAISE EXCEPTION 'enqueue_job: only the owners and editors of portal % may start '
                                'its fetches and exports; a viewer may only read',
                                v_run.portal_id
                    USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
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
        -- The owner's busy portals, this one included: portals_owner_idx, then a probe of
        -- jobs_in_flight_uniq per portal of the owner.
        SELECT count(*) INTO v_busy FROM public.portals AS p
        WHERE p.owner_id = (SELECT o.owner_id FROM public.portals AS o
                            WHERE o.id = v_run.portal_id)
          AND (p.id = v_run.portal_id
               OR EXISTS (SELECT FROM public.jobs AS b
                          WHERE b.portal_id = p.id AND b.status IN ('pending', 'running')));

        RETURN QUERY
        INSERT INTO public.jobs AS j (run_id, portal_id, kind, content_type, max_attempts,
                                      run_after, total, idempotency_key, priority, fair_at)
        VALUES (v_run.id, v_run.portal_id, v_run.kind, p_content_type, p_max_attempts,
                v_run_after, p_total, p_idempotency_key, v_priority,
                v_run_after + (v_ahead * v_busy + v_busy - 1) * interval '10 seconds')
        ON CONFLICT DO NOTHING
        RETURNING j.*;
    END
    $$;


ALTER FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) OWNER TO smuves_owner;

--
-- Name: exports_follow_job(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.exports_follow_job() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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


ALTER FUNCTION public.exports_follow_job() OWNER TO smuves_owner;

--
-- Name: fail_job(bigint, uuid, text, boolean, interval, interval, double precision, timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval DEFAULT '00:00:10'::interval, p_backoff_max interval DEFAULT '00:10:00'::interval, p_jitter_ratio double precision DEFAULT 0.1, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_error_public text DEFAULT NULL::text) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
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


ALTER FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text) OWNER TO smuves_owner;

--
-- Name: fail_run_token_refused(bigint, uuid, text, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
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


ALTER FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: fetch_seen_forget_deleted_jobs(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.fetch_seen_forget_deleted_jobs() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s WHERE s.job_id IN (SELECT o.id FROM old_jobs AS o);
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.fetch_seen_forget_deleted_jobs() OWNER TO smuves_owner;

--
-- Name: fetch_seen_forget_finished_jobs(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.fetch_seen_forget_finished_jobs() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    BEGIN
        DELETE FROM public.fetch_seen AS s
        WHERE s.job_id = ANY (ARRAY(
            SELECT n.id FROM new_jobs AS n JOIN old_jobs AS o ON o.id = n.id
            WHERE n.kind = 'fetch' AND n.status IN ('completed', 'failed', 'stopped')
              AND o.status IS DISTINCT FROM n.status));
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.fetch_seen_forget_finished_jobs() OWNER TO smuves_owner;

--
-- Name: heartbeat_job(bigint, uuid, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        UPDATE public.jobs AS j
        SET heartbeat_at = public.effective_now(p_now)
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        RETURNING j.*
    $$;


ALTER FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: job_lease_expired(public.jobs, timestamp with time zone, interval, interval, interval); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_job.status = 'running'
           AND p_job.heartbeat_at < p_now - least(p_fetch_lease, p_export_lease, p_push_lease)
           AND p_job.heartbeat_at < p_now - CASE p_job.kind WHEN 'fetch' THEN p_fetch_lease
                                                            WHEN 'push' THEN p_push_lease
                                                            ELSE p_export_lease END
    $$;


ALTER FUNCTION public.job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval) OWNER TO smuves_owner;

--
-- Name: job_to_pending(public.jobs); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.job_to_pending(p_job public.jobs) RETURNS SETOF public.jobs
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
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


ALTER FUNCTION public.job_to_pending(p_job public.jobs) OWNER TO smuves_owner;

--
-- Name: job_within_portal_cap(bigint, bigint, smallint, timestamp with time zone, timestamp with time zone, bigint, integer); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) RETURNS SETOF boolean
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


ALTER FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) OWNER TO smuves_owner;

--
-- Name: jobs_notify_inserted(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.jobs_notify_inserted() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        PERFORM pg_catalog.pg_notify('smuves_jobs', k.kind)
        FROM (SELECT DISTINCT i.kind FROM inserted AS i WHERE i.status = 'pending') AS k;
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.jobs_notify_inserted() OWNER TO smuves_owner;

--
-- Name: mark_portal_token_refused(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.mark_portal_token_refused(p_portal_id bigint) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        -- The definer sees every row: the caller's right is checked here.
        UPDATE public.portals AS p
        SET token_rejected_at = coalesce(p.token_rejected_at, pg_catalog.now())
        WHERE p.id = p_portal_id
          AND (public.operator_session()
               OR p.id IN (SELECT public.member_portal_ids())
               OR p.owner_id = public.current_app_user());
        RETURN FOUND;
    END
    $$;


ALTER FUNCTION public.mark_portal_token_refused(p_portal_id bigint) OWNER TO smuves_owner;

--
-- Name: member_portal_ids(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.member_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user()
    $$;


ALTER FUNCTION public.member_portal_ids() OWNER TO smuves_owner;

--
-- Name: metrics_job_durations(double precision[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.metrics_job_durations(p_bounds double precision[]) RETURNS TABLE(kind text, status text, bucket integer, jobs bigint, seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT d.kind, d.status,
               (SELECT count(*) FROM unnest(p_bounds) AS b WHERE b < d.seconds)::integer,
               count(*), sum(d.seconds)
        FROM (SELECT j.kind::text AS kind, j.status::text AS status,
                     greatest(extract(epoch FROM j.finished_at - j.created_at)::float8, 0)
                         AS seconds
              FROM public.jobs AS j
              WHERE j.finished_at IS NOT NULL) AS d
        GROUP BY 1, 2, 3
    $$;


ALTER FUNCTION public.metrics_job_durations(p_bounds double precision[]) OWNER TO smuves_owner;

--
-- Name: metrics_jobs(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.metrics_jobs(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(kind text, status text, jobs bigint, oldest_pending_seconds double precision)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT j.kind::text, j.status::text, count(*),
               extract(epoch FROM coalesce(p_now, now())
                                  - min(j.run_after) FILTER (
                                        WHERE j.status = 'pending'
                                          AND j.run_after <= coalesce(p_now, now())))::float8
        FROM public.jobs AS j
        GROUP BY j.kind, j.status
    $$;


ALTER FUNCTION public.metrics_jobs(p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: metrics_workers_live(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.metrics_workers_live(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT count(*) FROM public.workers AS w
        WHERE public.worker_alive(w.last_seen_at, w.heartbeat_every, public.effective_now(p_now))
    $$;


ALTER FUNCTION public.metrics_workers_live(p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: notify_run_owners(public.run_notice[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.notify_run_owners(p_notices public.run_notice[]) RETURNS void
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


ALTER FUNCTION public.notify_run_owners(p_notices public.run_notice[]) OWNER TO smuves_owner;

--
-- Name: runs; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.runs (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    owner_id uuid,
    kind public.job_kind NOT NULL,
    status public.run_status DEFAULT 'pending'::text NOT NULL,
    content_types public.content_type[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    full_read boolean DEFAULT false NOT NULL,
    CONSTRAINT runs_content_types_present CHECK ((cardinality(content_types) > 0))
)
WITH (autovacuum_vacuum_scale_factor='0.05', autovacuum_analyze_scale_factor='0.05');

ALTER TABLE ONLY public.runs FORCE ROW LEVEL SECURITY;


ALTER TABLE public.runs OWNER TO smuves_owner;

--
-- Name: notify_settled_runs(public.runs[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.notify_settled_runs(p_runs public.runs[]) RETURNS void
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


ALTER FUNCTION public.notify_settled_runs(p_runs public.runs[]) OWNER TO smuves_owner;

--
-- Name: operator_session(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.operator_session() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT pg_catalog.pg_has_role(session_user, 'smuves_owner', 'MEMBER') $$;


ALTER FUNCTION public.operator_session() OWNER TO smuves_owner;

--
-- Name: park_job(bigint, uuid, timestamp with time zone, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_job public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        v_job.run_after := greatest(p_until, public.effective_now(p_now));
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        v_job.last_error := left(p_reason, 2000);
        v_job.last_error_public := left(p_reason, 2000);  -- a wait, told as it is
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
    END
    $$;


ALTER FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: portal_token(bigint, uuid); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) RETURNS TABLE(portal_id bigint, token_encrypted bytea, time_zone text, token_rejected_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT p.id, p.token_encrypted, p.time_zone, p.token_rejected_at
        FROM public.jobs AS j JOIN public.portals AS p ON p.id = j.portal_id
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
    $$;


ALTER FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) OWNER TO smuves_owner;

--
-- Name: portal_token_for_member(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.portal_token_for_member(p_portal_id bigint) RETURNS TABLE(portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        -- The definer sees every row: the caller's membership is checked here.
        SELECT p.id, p.token_encrypted
        FROM public.portals AS p
        WHERE p.id = p_portal_id
          AND (p.id IN (SELECT public.member_portal_ids())
               OR p.owner_id = public.current_app_user())
    $$;


ALTER FUNCTION public.portal_token_for_member(p_portal_id bigint) OWNER TO smuves_owner;

--
-- Name: portal_token_for_operator(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.portal_token_for_operator(p_portal_id bigint) RETURNS TABLE(portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT p.id, p.token_encrypted FROM public.portals AS p WHERE p.id = p_portal_id
    $$;


ALTER FUNCTION public.portal_token_for_operator(p_portal_id bigint) OWNER TO smuves_owner;

--
-- Name: portals_add_owner_member(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.portals_add_owner_member() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        INSERT INTO public.portal_members (portal_id, user_id, role)
        VALUES (NEW.id, NEW.owner_id, 'owner')
        ON CONFLICT (portal_id, user_id) DO UPDATE SET role = 'owner';
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.portals_add_owner_member() OWNER TO smuves_owner;

--
-- Name: portals_delete_content(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.portals_delete_content() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        DELETE FROM public.content_items AS c
        WHERE c.portal_id IN (SELECT o.id FROM old_portals AS o);
        DELETE FROM public.content_versions AS v
        WHERE v.portal_id IN (SELECT o.id FROM old_portals AS o);
        RETURN NULL;
    END
    $$;


ALTER FUNCTION public.portals_delete_content() OWNER TO smuves_owner;

--
-- Name: prune_content_versions(bigint, timestamp with time zone, timestamp with time zone, bigint, integer, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone DEFAULT '-infinity'::timestamp with time zone, p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 5000, p_dry_run boolean DEFAULT false) RETURNS TABLE(scanned bigint, deleted bigint, documents_moved bigint, last_recorded_at timestamp with time zone, last_id bigint)
    LANGUAGE sql
    AS $$
        WITH batch AS (
            SELECT v.content_type, v.hubspot_id, v.version, v.recorded_at, v.id,
                   coalesce(v.superseded_at < p_cutoff, false)
                   AND NOT EXISTS (
                       SELECT FROM public.content_items AS c
                       WHERE c.portal_id = p_portal_id AND c.content_type = v.content_type
                         AND c.hubspot_id = v.hubspot_id AND c.deleted_at < p_cutoff)
                       AS doomed
            FROM public.content_versions AS v
            WHERE v.portal_id = p_portal_id AND v.recorded_at < p_cutoff
              AND (v.recorded_at, v.id) > (p_after_at, p_after_id)
            ORDER BY v.recorded_at, v.id
            LIMIT greatest(p_limit, 1)
        ),
        doomed AS (
            SELECT v.content_type, v.hubspot_id, v.version, v.hash, v.document
            FROM batch AS b
            JOIN public.content_versions AS v
              ON v.portal_id = p_portal_id AND v.content_type = b.content_type
             AND v.hubspot_id = b.hubspot_id AND v.version = b.version
            WHERE b.doomed
        ),
        heirs AS (
            SELECT DISTINCT ON (d.content_type, d.hubspot_id, d.hash)
                   d.content_type, d.hubspot_id, k.version, d.document
            FROM doomed AS d
            JOIN public.content_versions AS k
              ON k.portal_id = p_portal_id AND k.content_type = d.content_type
             AND k.hubspot_id = d.hubspot_id AND k.hash = d.hash
            WHERE d.document IS NOT NULL
              AND (k.superseded_at IS NULL OR k.superseded_at >= p_cutoff)
            ORDER BY d.content_type, d.hubspot_id, d.hash, k.version
        ),
        moved AS (
            UPDATE public.content_versions AS k
            SET document = coalesce(k.document, h.document)
            FROM heirs AS h
            WHERE NOT p_dry_run
              AND k.portal_id = p_portal_id AND k.content_type = h.content_type
              AND k.hubspot_id = h.hubspot_id AND k.version = h.version
            RETURNING 1
        ),
        gone AS (
            DELETE FROM public.content_versions AS v
            USING doomed AS d
            WHERE NOT p_dry_run
              AND v.portal_id = p_portal_id AND v.content_type = d.content_type
              AND v.hubspot_id = d.hubspot_id AND v.version = d.version
            RETURNING 1
        ),
        last AS (
            SELECT b.recorded_at, b.id FROM batch AS b
            ORDER BY b.recorded_at DESC, b.id DESC
            LIMIT 1
        )
        SELECT (SELECT count(*) FROM batch),
               CASE WHEN p_dry_run THEN (SELECT count(*) FROM doomed)
                    ELSE (SELECT count(*) FROM gone) END,
               CASE WHEN p_dry_run THEN (SELECT count(*) FROM heirs)
                    ELSE (SELECT count(*) FROM moved) END,
               (SELECT l.recorded_at FROM last AS l),
               (SELECT l.id FROM last AS l)
    $$;


ALTER FUNCTION public.prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone, p_after_id bigint, p_limit integer, p_dry_run boolean) OWNER TO smuves_owner;

--
-- Name: prune_deleted_content(bigint, timestamp with time zone, integer, boolean); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer DEFAULT 1000, p_dry_run boolean DEFAULT false) RETURNS TABLE(objects bigint, versions bigint)
    LANGUAGE plpgsql
    AS $$
    DECLARE
        v_types text[];
        v_ids text[];
    BEGIN
        IF p_dry_run THEN
            RETURN QUERY
            SELECT count(*),
                   coalesce(sum((SELECT count(*) FROM public.content_history AS v
                                 WHERE v.portal_id = p_portal_id
                                   AND v.content_type = c.content_type
                                   AND v.hubspot_id = c.hubspot_id)), 0)::bigint
            FROM public.content_items AS c
            WHERE c.portal_id = p_portal_id AND c.deleted_at < p_cutoff;
            RETURN;
        END IF;
        WITH doomed AS (
            SELECT c.content_type, c.hubspot_id FROM public.content_items AS c
            WHERE c.portal_id = p_portal_id AND c.deleted_at < p_cutoff
            ORDER BY c.deleted_at, c.content_type, c.hubspot_id
            LIMIT greatest(p_limit, 1)
            FOR UPDATE
        ),
        gone AS (
            DELETE FROM public.content_items AS c
            USING doomed AS d
            WHERE c.portal_id = p_portal_id AND c.content_type = d.content_type
              AND c.hubspot_id = d.hubspot_id
            RETURNING c.content_type::text AS content_type, c.hubspot_id
        )
        SELECT coalesce(array_agg(g.content_type), '{}'), coalesce(array_agg(g.hubspot_id), '{}')
        INTO v_types, v_ids
        FROM gone AS g;
        RETURN QUERY
        WITH versions_gone AS (
            DELETE FROM public.content_versions AS v
            USING unnest(v_types, v_ids) AS d (content_type, hubspot_id)
            WHERE v.portal_id = p_portal_id AND v.content_type = d.content_type
              AND v.hubspot_id = d.hubspot_id
            RETURNING 1
        )
        SELECT cardinality(v_ids)::bigint, (SELECT count(*) FROM versions_gone);
    END
    $$;


ALTER FUNCTION public.prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer, p_dry_run boolean) OWNER TO smuves_owner;

--
-- Name: prune_runs(interval, boolean, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.prune_runs(p_older_than interval, p_dry_run boolean DEFAULT false, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(runs bigint, jobs bigint, exports bigint, notifications bigint, export_files jsonb)
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


ALTER FUNCTION public.prune_runs(p_older_than interval, p_dry_run boolean, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: push_job_changeset(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.push_job_changeset() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        IF NOT public.worker_holds_lease() THEN
            RETURN NULL;
        END IF;
        SELECT c.id INTO v_id
        FROM public.jobs AS j
        JOIN public.changesets AS c ON c.run_id = j.run_id AND c.portal_id = j.portal_id
        WHERE j.id = nullif(current_setting('app.job_id', true), '')::bigint
          AND j.kind = 'push';
        RETURN v_id;
    END
    $$;


ALTER FUNCTION public.push_job_changeset() OWNER TO smuves_owner;

--
-- Name: push_versions_attribute(text, text[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) RETURNS TABLE(hubspot_id text, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_changeset bigint := public.push_job_changeset();
        v_portal bigint := public.current_app_portal();
    BEGIN
        IF v_changeset IS NULL THEN
            RAISE EXCEPTION 'push_versions_attribute: no live lease of a push job'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN QUERY
        WITH newest AS (
            -- An object's current version number is its row's (content_history_begin keeps
            -- it); a version past the first also stands in content_versions, to be marked.
            SELECT c.hubspot_id, c.version
            FROM public.content_items AS c
            WHERE c.portal_id = v_portal AND c.content_type = p_content_type
              AND c.hubspot_id = ANY (p_hubspot_ids)
        ), marked AS (
            UPDATE public.content_versions AS v
            SET changeset_id = v_changeset
            FROM newest AS n
            WHERE v.portal_id = v_portal AND v.content_type = p_content_type
              AND v.hubspot_id = n.hubspot_id AND v.version = n.version
              AND v.changeset_id IS NULL
            RETURNING v.hubspot_id
        )
        -- marked runs whether or not it is read (a data-modifying WITH always does).
        SELECT n.hubspot_id, n.version FROM newest AS n;
    END
    $$;


ALTER FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) OWNER TO smuves_owner;

--
-- Name: reconcile_stuck_runs(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
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


ALTER FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: record_hubspot_minute(bigint, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_minute timestamptz := date_trunc('minute', public.effective_now(p_now));
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


ALTER FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: release_job(bigint, uuid, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.jobs
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_job public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        v_job.run_after := public.effective_now(p_now);
        v_job.attempts := greatest(v_job.attempts - 1, 0);
        RETURN QUERY SELECT * FROM public.job_to_pending(v_job);
        PERFORM pg_catalog.pg_notify('smuves_jobs', v_job.kind);
    END
    $$;


ALTER FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: requeue_job(bigint, boolean, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.requeue_job(p_job_id bigint, p_from_start boolean DEFAULT false, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(job_id bigint, outcome text, previous_status text, blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := coalesce(p_now, now());
        v_job public.jobs;
        v_blocking public.jobs;
    BEGIN
        SELECT * INTO v_job FROM public.jobs AS j WHERE j.id = p_job_id FOR UPDATE;
        IF NOT FOUND THEN
            RETURN QUERY SELECT p_job_id, 'not_found'::text, NULL::text, NULL::bigint,
                                NULL::bigint;
            RETURN;
        END IF;
        IF v_job.status NOT IN ('failed', 'stopped') THEN
            RETURN QUERY SELECT p_job_id, 'not_finished'::text, v_job.status::text,
                                NULL::bigint, NULL::bigint;
            RETURN;
        END IF;

        SELECT * INTO v_blocking FROM public.jobs AS j
        WHERE j.portal_id = v_job.portal_id AND j.kind = v_job.kind
          AND j.content_type = v_job.content_type AND j.status IN ('pending', 'running')
        ORDER BY j.id LIMIT 1;
        IF FOUND THEN
            RETURN QUERY SELECT p_job_id, 'in_flight'::text, v_job.status::text,
                                v_blocking.id, v_blocking.run_id;
            RETURN;
        END IF;

        v_job.attempts := 0;
        v_job.run_after := v_now;
        IF p_from_start THEN
            v_job.cursor := NULL;
            v_job.processed := 0;
        END IF;
        BEGIN
            PERFORM FROM public.job_to_pending(v_job);
        EXCEPTION WHEN unique_violation THEN
            -- Another session made an equal job in flight after the check above.
            SELECT * INTO v_blocking FROM public.jobs AS j
            WHERE j.portal_id = v_job.portal_id AND j.kind = v_job.kind
              AND j.content_type = v_job.content_type AND j.status IN ('pending', 'running')
            ORDER BY j.id LIMIT 1;
            RETURN QUERY SELECT p_job_id, 'in_flight'::text, v_job.status::text,
                                v_blocking.id, v_blocking.run_id;
            RETURN;
        END;

        -- A settled run only settles again while it is open; reopen it.
        UPDATE public.runs AS r
        SET status = CASE WHEN r.started_at IS NULL THEN 'pending' ELSE 'running' END,
            finished_at = NULL
        WHERE r.id = v_job.run_id AND r.status NOT IN ('pending', 'running');

        -- Updates fire no insert trigger: wake idle workers the way release_job does.
        PERFORM pg_catalog.pg_notify('smuves_jobs', v_job.kind);
        RETURN QUERY SELECT p_job_id, 'requeued'::text, v_job.status::text, NULL::bigint,
                            NULL::bigint;
    END
    $$;


ALTER FUNCTION public.requeue_job(p_job_id bigint, p_from_start boolean, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: retry_failed_jobs(bigint, bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.retry_failed_jobs(p_portal_id bigint DEFAULT NULL::bigint, p_run_id bigint DEFAULT NULL::bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(job_id bigint, outcome text, previous_status text, blocking_job_id bigint, blocking_run_id bigint)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        FOR v_id IN
            SELECT j.id FROM public.jobs AS j
            WHERE j.status = 'failed'
              AND (p_portal_id IS NULL OR j.portal_id = p_portal_id)
              AND (p_run_id IS NULL OR j.run_id = p_run_id)
            ORDER BY j.id DESC
        LOOP
            RETURN QUERY SELECT * FROM public.requeue_job(v_id, false, p_now);
        END LOOP;
    END
    $$;


ALTER FUNCTION public.retry_failed_jobs(p_portal_id bigint, p_run_id bigint, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: run_failures_note(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.run_failures_note(p_run_id bigint) RETURNS text
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


ALTER FUNCTION public.run_failures_note(p_run_id bigint) OWNER TO smuves_owner;

--
-- Name: run_finished(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.run_finished(p_run_id bigint) RETURNS SETOF boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT NOT EXISTS (SELECT FROM public.jobs AS j
                           WHERE j.run_id = p_run_id AND j.status IN ('pending', 'running'))
    $$;


ALTER FUNCTION public.run_finished(p_run_id bigint) OWNER TO smuves_owner;

--
-- Name: run_rejects_note(bigint); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.run_rejects_note(p_run_id bigint) RETURNS text
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


ALTER FUNCTION public.run_rejects_note(p_run_id bigint) OWNER TO smuves_owner;

--
-- Name: run_to_stopped(bigint, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone) RETURNS SETOF public.runs
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


ALTER FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: schedule_is_due(public.schedules, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_schedule.enabled
           AND (p_schedule.next_run_at IS NULL OR p_schedule.next_run_at <= p_now)
    $$;


ALTER FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: settle_locked_runs(bigint[], timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
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


ALTER FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: settle_runs(bigint[], timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
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


ALTER FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: stop_run(bigint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.runs
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


ALTER FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: transfer_portal(bigint, uuid); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.transfer_portal(p_portal_id bigint, p_owner_id uuid) RETURNS TABLE(email text)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_previous uuid;
        v_removed uuid[];
    BEGIN
        SELECT p.owner_id INTO v_previous FROM public.portals AS p
        WHERE p.id = p_portal_id
        FOR UPDATE;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        SELECT coalesce(array_agg(DISTINCT w.user_id), '{}') INTO v_removed
        FROM (SELECT m.user_id FROM public.portal_members AS m WHERE m.portal_id = p_portal_id
              UNION ALL SELECT v_previous) AS w
        WHERE w.user_id <> p_owner_id;

        UPDATE public.portals AS p SET owner_id = p_owner_id WHERE p.id = p_portal_id;
        DELETE FROM public.portal_members AS m
        WHERE m.portal_id = p_portal_id AND m.user_id <> p_owner_id;
        INSERT INTO public.portal_members (portal_id, user_id, role)
        VALUES (p_portal_id, p_owner_id, 'owner')
        ON CONFLICT (portal_id, user_id) DO UPDATE SET role = 'owner';

        DELETE FROM public.notifications AS n
        USING public.runs AS r
        WHERE n.run_id = r.id AND r.portal_id = p_portal_id AND n.user_id = ANY (v_removed);
        UPDATE public.runs AS r SET owner_id = NULL
        WHERE r.portal_id = p_portal_id AND r.owner_id = ANY (v_removed);
        UPDATE public.schedules AS s SET owner_id = NULL
        WHERE s.portal_id = p_portal_id AND s.owner_id = ANY (v_removed);

        RETURN QUERY SELECT u.email FROM public.app_users AS u
                     WHERE u.id = ANY (v_removed) ORDER BY u.email;
    END
    $$;


ALTER FUNCTION public.transfer_portal(p_portal_id bigint, p_owner_id uuid) OWNER TO smuves_owner;

--
-- Name: worker_alive(timestamp with time zone, interval, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT p_last_seen > p_now - 3 * p_every $$;


ALTER FUNCTION public.worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: worker_heartbeat(bigint, uuid, bigint[], timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
    BEGIN
        UPDATE public.workers AS w
        SET last_seen_at = greatest(w.last_seen_at, v_now),
            job_ids = coalesce(p_job_ids, '{}')
        WHERE w.id = p_id AND w.token_hash = sha256(convert_to(p_token::text, 'UTF8'));
        RETURN FOUND;
    END
    $$;


ALTER FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: worker_holds_lease(); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_holds_lease() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RETURN EXISTS (
            SELECT FROM public.jobs AS j
            JOIN public.job_leases AS l ON l.kind = j.kind
            WHERE j.id = nullif(current_setting('app.job_id', true), '')::bigint
              AND j.lease_token = nullif(current_setting('app.lease_token', true), '')::uuid
              AND j.portal_id = public.current_app_portal()
              AND j.status = 'running'
              AND j.heartbeat_at >= now() - l.lease);
    END
    $$;


ALTER FUNCTION public.worker_holds_lease() OWNER TO smuves_owner;

--
-- Name: worker_may_create_run(bigint, uuid, public.job_kind, text[]); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT public.operator_session()
            OR (p_kind = 'fetch'
                AND EXISTS (SELECT FROM public.schedules AS s
                            WHERE s.portal_id = p_portal_id
                              AND s.enabled
                              AND s.next_run_at <= now()
                              AND s.owner_id IS NOT DISTINCT FROM p_owner_id
                              AND p_types <@ s.content_types::text[]))
    $$;


ALTER FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) OWNER TO smuves_owner;

--
-- Name: worker_register(text, text, integer, text[], integer, bigint, interval, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS TABLE(id bigint, token uuid)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_now timestamptz := public.effective_now(p_now);
        v_token uuid := gen_random_uuid();
        v_id bigint;
    BEGIN
        IF p_kinds IS NULL OR cardinality(p_kinds) = 0
           OR NOT p_kinds <@ ARRAY['fetch', 'export', 'push'] THEN
            RAISE EXCEPTION 'worker_register: kinds must be some of fetch, export, push; got %',
                            p_kinds
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF p_heartbeat_every IS NULL OR p_heartbeat_every < interval '1 second'
           OR p_heartbeat_every > interval '10 minutes' THEN
            RAISE EXCEPTION 'worker_register: heartbeat interval must be 1 s to 10 min, got %',
                p_heartbeat_every
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        -- A day of silence: that process is gone for good; its row would only clutter.
        DELETE FROM public.workers AS w WHERE w.last_seen_at < v_now - interval '1 day';
        INSERT INTO public.workers AS w
            (token_hash, name, host, pid, kinds, concurrency, run_id, heartbeat_every,
             started_at, last_seen_at)
        VALUES (sha256(convert_to(v_token::text, 'UTF8')), p_name, p_host, p_pid,
                ARRAY(SELECT DISTINCT k FROM unnest(p_kinds) AS k ORDER BY k), p_concurrency,
                p_run_id, p_heartbeat_every, v_now, v_now)
        RETURNING w.id INTO v_id;
        RETURN QUERY SELECT v_id, v_token;
    END
    $$;


ALTER FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone) OWNER TO smuves_owner;

--
-- Name: worker_unregister(bigint, uuid); Type: FUNCTION; Schema: public; Owner: smuves_owner
--

CREATE FUNCTION public.worker_unregister(p_id bigint, p_token uuid) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        DELETE FROM public.workers AS w
        WHERE w.id = p_id AND w.token_hash = sha256(convert_to(p_token::text, 'UTF8'));
        RETURN FOUND;
    END
    $$;


ALTER FUNCTION public.worker_unregister(p_id bigint, p_token uuid) OWNER TO smuves_owner;

--
-- Name: app_users; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.app_users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    invited boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT app_users_email_lower CHECK ((email = lower(email))),
    CONSTRAINT app_users_email_shape CHECK ((email ~ '^[^@\s]+@[^@\s]+$'::text))
);

ALTER TABLE ONLY public.app_users FORCE ROW LEVEL SECURITY;


ALTER TABLE public.app_users OWNER TO smuves_owner;

--
-- Name: changeset_items; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.changeset_items (
    changeset_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text NOT NULL,
    base_version integer,
    base_updated text,
    fields jsonb DEFAULT '{}'::jsonb NOT NULL,
    before jsonb DEFAULT '{}'::jsonb NOT NULL,
    state text NOT NULL,
    reason text,
    warnings text[] DEFAULT '{}'::text[] NOT NULL,
    applied_version integer,
    applied_at timestamp with time zone,
    CONSTRAINT changeset_items_before_object CHECK ((jsonb_typeof(before) = 'object'::text)),
    CONSTRAINT changeset_items_fields_object CHECK ((jsonb_typeof(fields) = 'object'::text)),
    CONSTRAINT changeset_items_hubspot_id_present CHECK ((hubspot_id <> ''::text)),
    CONSTRAINT changeset_items_state_known CHECK ((state = ANY (ARRAY['pending'::text, 'unchanged'::text, 'invalid'::text, 'applied'::text, 'conflict'::text, 'failed'::text, 'held'::text])))
);

ALTER TABLE ONLY public.changeset_items FORCE ROW LEVEL SECURITY;


ALTER TABLE public.changeset_items OWNER TO smuves_owner;

--
-- Name: changesets; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.changesets (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    owner_id uuid,
    content_type public.content_type,
    source text NOT NULL,
    rolls_back bigint,
    filename text,
    status text DEFAULT 'draft'::text NOT NULL,
    publish text,
    run_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    pushed_at timestamp with time zone,
    CONSTRAINT changesets_filename_short CHECK ((length(filename) <= 255)),
    CONSTRAINT changesets_publish_known CHECK ((publish = ANY (ARRAY['live'::text, 'draft'::text]))),
    CONSTRAINT changesets_rolls_back_rollback CHECK (((source = 'rollback'::text) = (rolls_back IS NOT NULL))),
    CONSTRAINT changesets_source_known CHECK ((source = ANY (ARRAY['import'::text, 'rollback'::text]))),
    CONSTRAINT changesets_status_known CHECK ((status = ANY (ARRAY['draft'::text, 'pushing'::text, 'pushed'::text])))
);

ALTER TABLE ONLY public.changesets FORCE ROW LEVEL SECURITY;


ALTER TABLE public.changesets OWNER TO smuves_owner;

--
-- Name: changesets_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.changesets ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.changesets_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: content_history; Type: VIEW; Schema: public; Owner: smuves_owner
--

CREATE VIEW public.content_history WITH (security_invoker='true') AS
 SELECT v.portal_id,
    v.content_type,
    v.hubspot_id,
    v.version,
    v.event,
    v.hash,
    v.document,
    v.seen_from_run,
    v.seen_until_run,
    v.recorded_at,
    v.superseded_at,
    v.id
   FROM public.content_versions v
UNION ALL
 SELECT c.portal_id,
    c.content_type,
    c.hubspot_id,
    c.version,
    (
        CASE
            WHEN (c.deleted_at IS NULL) THEN 'created'::text
            ELSE 'deleted'::text
        END)::public.content_event AS event,
    c.content_hash AS hash,
    NULL::jsonb AS document,
    c.first_version_run AS seen_from_run,
    NULL::bigint AS seen_until_run,
    c.first_version_at AS recorded_at,
    NULL::timestamp with time zone AS superseded_at,
    c.first_version_id AS id
   FROM public.content_items c
  WHERE ((c.version = 1) AND (c.first_version_id IS NOT NULL));


ALTER TABLE public.content_history OWNER TO smuves_owner;

--
-- Name: content_rejects; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.content_rejects (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    run_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_id text,
    reason text NOT NULL,
    raw bytea NOT NULL,
    raw_size integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT content_rejects_raw_size_nonnegative CHECK ((raw_size >= 0))
);

ALTER TABLE ONLY public.content_rejects FORCE ROW LEVEL SECURITY;


ALTER TABLE public.content_rejects OWNER TO smuves_owner;

--
-- Name: content_rejects_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_rejects ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.content_rejects_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: content_syncs; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.content_syncs (
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    run_id bigint NOT NULL,
    job_id bigint NOT NULL,
    confirmed_at timestamp with time zone NOT NULL,
    seen bigint NOT NULL,
    deleted bigint NOT NULL,
    mode text DEFAULT 'full'::text NOT NULL,
    listing_started_at timestamp with time zone,
    last_full_listing_at timestamp with time zone,
    last_incremental_listing_at timestamp with time zone,
    CONSTRAINT content_syncs_deleted_nonnegative CHECK ((deleted >= 0)),
    CONSTRAINT content_syncs_mode_known CHECK ((mode = ANY (ARRAY['full'::text, 'incremental'::text]))),
    CONSTRAINT content_syncs_seen_nonnegative CHECK ((seen >= 0))
);

ALTER TABLE ONLY public.content_syncs FORCE ROW LEVEL SECURITY;


ALTER TABLE public.content_syncs OWNER TO smuves_owner;

--
-- Name: content_types; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.content_types (
    name text NOT NULL,
    CONSTRAINT content_types_name_word CHECK ((name ~ '^[a-z][a-z0-9_]*$'::text))
);


ALTER TABLE public.content_types OWNER TO smuves_owner;

--
-- Name: dashboard_confirmations; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.dashboard_confirmations (
    nonce_hash text NOT NULL,
    session text NOT NULL,
    action text NOT NULL,
    target jsonb NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT dashboard_confirmations_action_word CHECK ((action ~ '^[a-z][a-z_]*$'::text)),
    CONSTRAINT dashboard_confirmations_hash_hex CHECK ((nonce_hash ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE ONLY public.dashboard_confirmations FORCE ROW LEVEL SECURITY;


ALTER TABLE public.dashboard_confirmations OWNER TO smuves_owner;

--
-- Name: exports; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.exports (
    id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    format public.export_format NOT NULL,
    status public.job_status DEFAULT 'pending'::text NOT NULL,
    path text,
    row_count bigint,
    bytes bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    include_deleted boolean DEFAULT false NOT NULL,
    deleted_count bigint,
    edit boolean DEFAULT false NOT NULL,
    fields text[],
    CONSTRAINT exports_bytes_nonnegative CHECK ((bytes >= 0)),
    CONSTRAINT exports_deleted_count_nonnegative CHECK ((deleted_count >= 0)),
    CONSTRAINT exports_edit_csv CHECK (((NOT edit) OR ((format)::text = 'csv'::text))),
    CONSTRAINT exports_fields_edit CHECK (((fields IS NULL) OR edit)),
    CONSTRAINT exports_row_count_nonnegative CHECK ((row_count >= 0))
);

ALTER TABLE ONLY public.exports FORCE ROW LEVEL SECURITY;


ALTER TABLE public.exports OWNER TO smuves_owner;

--
-- Name: exports_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.exports ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.exports_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: fetch_reads; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.fetch_reads (
    job_id bigint NOT NULL,
    run_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    mode text NOT NULL,
    reason text NOT NULL,
    since timestamp with time zone,
    listing_started_at timestamp with time zone NOT NULL,
    requests bigint DEFAULT 0 NOT NULL,
    changed bigint DEFAULT 0 NOT NULL,
    deleted bigint DEFAULT 0 NOT NULL,
    unchanged bigint DEFAULT 0 NOT NULL,
    archived_pass_requests bigint DEFAULT 0 NOT NULL,
    count_window_requests bigint DEFAULT 0 NOT NULL,
    full_read_requests bigint DEFAULT 0 NOT NULL,
    parent_states jsonb,
    CONSTRAINT fetch_reads_changed_nonnegative CHECK ((changed >= 0)),
    CONSTRAINT fetch_reads_deleted_nonnegative CHECK ((deleted >= 0)),
    CONSTRAINT fetch_reads_deletion_costs_nonnegative CHECK (((archived_pass_requests >= 0) AND (count_window_requests >= 0) AND (full_read_requests >= 0))),
    CONSTRAINT fetch_reads_mode_known CHECK ((mode = ANY (ARRAY['full'::text, 'incremental'::text]))),
    CONSTRAINT fetch_reads_requests_nonnegative CHECK ((requests >= 0)),
    CONSTRAINT fetch_reads_unchanged_nonnegative CHECK ((unchanged >= 0))
);

ALTER TABLE ONLY public.fetch_reads FORCE ROW LEVEL SECURITY;


ALTER TABLE public.fetch_reads OWNER TO smuves_owner;

--
-- Name: fetch_seen; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE UNLOGGED TABLE public.fetch_seen (
    job_id bigint NOT NULL,
    portal_id bigint NOT NULL,
    hubspot_id text NOT NULL
);

ALTER TABLE ONLY public.fetch_seen FORCE ROW LEVEL SECURITY;


ALTER TABLE public.fetch_seen OWNER TO smuves_owner;

--
-- Name: hubspot_minutes; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.hubspot_minutes (
    minute timestamp with time zone NOT NULL,
    requests bigint DEFAULT 0 NOT NULL,
    rate_limited bigint DEFAULT 0 NOT NULL,
    CONSTRAINT hubspot_minutes_rate_limited_nonnegative CHECK ((rate_limited >= 0)),
    CONSTRAINT hubspot_minutes_requests_nonnegative CHECK ((requests >= 0))
);

ALTER TABLE ONLY public.hubspot_minutes FORCE ROW LEVEL SECURITY;


ALTER TABLE public.hubspot_minutes OWNER TO smuves_owner;

--
-- Name: job_leases; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.job_leases (
    kind public.job_kind NOT NULL,
    lease interval NOT NULL,
    CONSTRAINT job_leases_sensible CHECK ((lease >= '00:00:01'::interval))
);


ALTER TABLE public.job_leases OWNER TO smuves_owner;

--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.jobs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: notifications; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.notifications (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    run_id bigint,
    kind text NOT NULL,
    message text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    read_at timestamp with time zone,
    schedule_id bigint,
    CONSTRAINT notifications_kind_word CHECK ((kind ~ '^[a-z][a-z_]*$'::text))
);

ALTER TABLE ONLY public.notifications FORCE ROW LEVEL SECURITY;


ALTER TABLE public.notifications OWNER TO smuves_owner;

--
-- Name: notifications_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.notifications ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: operator_actions; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.operator_actions (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    client text,
    session text,
    action text NOT NULL,
    target jsonb DEFAULT '{}'::jsonb NOT NULL,
    outcome jsonb DEFAULT '{}'::jsonb NOT NULL,
    CONSTRAINT operator_actions_action_word CHECK ((action ~ '^[a-z][a-z_]*$'::text)),
    CONSTRAINT operator_actions_actor_present CHECK ((actor <> ''::text))
);

ALTER TABLE ONLY public.operator_actions FORCE ROW LEVEL SECURITY;


ALTER TABLE public.operator_actions OWNER TO smuves_owner;

--
-- Name: operator_actions_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.operator_actions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.operator_actions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: portal_members; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.portal_members (
    portal_id bigint NOT NULL,
    user_id uuid NOT NULL,
    role public.member_role DEFAULT 'viewer'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY public.portal_members FORCE ROW LEVEL SECURITY;


ALTER TABLE public.portal_members OWNER TO smuves_owner;

--
-- Name: portals; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.portals (
    id bigint NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    owner_id uuid NOT NULL,
    token_encrypted bytea,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    token_rejected_at timestamp with time zone,
    CONSTRAINT portals_id_positive CHECK ((id > 0)),
    CONSTRAINT portals_time_zone_name CHECK (((length(time_zone) <= 64) AND (time_zone ~ '^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$'::text)))
);

ALTER TABLE ONLY public.portals FORCE ROW LEVEL SECURITY;


ALTER TABLE public.portals OWNER TO smuves_owner;

--
-- Name: push_intents; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.push_intents (
    id bigint NOT NULL,
    portal_id bigint NOT NULL,
    changeset_id bigint NOT NULL,
    job_id bigint NOT NULL,
    content_type public.content_type NOT NULL,
    hubspot_ids text[] NOT NULL,
    seen_updated text[] NOT NULL,
    state text DEFAULT 'intended'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT push_intents_ids_sensible CHECK (((cardinality(hubspot_ids) >= 1) AND (cardinality(hubspot_ids) <= 100) AND (cardinality(seen_updated) = cardinality(hubspot_ids)))),
    CONSTRAINT push_intents_state_known CHECK ((state = ANY (ARRAY['intended'::text, 'sent'::text, 'decided'::text])))
);

ALTER TABLE ONLY public.push_intents FORCE ROW LEVEL SECURITY;


ALTER TABLE public.push_intents OWNER TO smuves_owner;

--
-- Name: push_intents_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.push_intents ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.push_intents_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: runs_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.runs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schedules_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.schedules ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.schedules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: schema_functions; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.schema_functions (
    file text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE public.schema_functions OWNER TO smuves_owner;

--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


ALTER TABLE public.schema_migrations OWNER TO smuves_owner;

--
-- Name: workers; Type: TABLE; Schema: public; Owner: smuves_owner
--

CREATE TABLE public.workers (
    id bigint NOT NULL,
    token_hash bytea NOT NULL,
    name text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    kinds text[] NOT NULL,
    concurrency integer NOT NULL,
    run_id bigint,
    heartbeat_every interval NOT NULL,
    started_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    job_ids bigint[] DEFAULT '{}'::bigint[] NOT NULL,
    CONSTRAINT workers_concurrency_sensible CHECK (((concurrency >= 1) AND (concurrency <= 10000))),
    CONSTRAINT workers_heartbeat_sensible CHECK (((heartbeat_every >= '00:00:01'::interval) AND (heartbeat_every <= '00:10:00'::interval))),
    CONSTRAINT workers_host_sensible CHECK (((length(host) >= 1) AND (length(host) <= 255))),
    CONSTRAINT workers_kinds_known CHECK (((cardinality(kinds) > 0) AND (kinds <@ ARRAY['fetch'::text, 'export'::text, 'push'::text]))),
    CONSTRAINT workers_name_sensible CHECK (((length(name) >= 1) AND (length(name) <= 200))),
    CONSTRAINT workers_pid_positive CHECK ((pid > 0)),
    CONSTRAINT workers_token_hash_sha256 CHECK ((octet_length(token_hash) = 32))
);

ALTER TABLE ONLY public.workers FORCE ROW LEVEL SECURITY;


ALTER TABLE public.workers OWNER TO smuves_owner;

--
-- Name: workers_id_seq; Type: SEQUENCE; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.workers ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.workers_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: app_users app_users_email_key; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.app_users
    ADD CONSTRAINT app_users_email_key UNIQUE (email);


--
-- Name: app_users app_users_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.app_users
    ADD CONSTRAINT app_users_pkey PRIMARY KEY (id);


--
-- Name: changeset_items changeset_items_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changeset_items
    ADD CONSTRAINT changeset_items_pkey PRIMARY KEY (changeset_id, content_type, hubspot_id);


--
-- Name: changesets changesets_id_portal_id_key; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changesets
    ADD CONSTRAINT changesets_id_portal_id_key UNIQUE (id, portal_id);


--
-- Name: changesets changesets_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changesets
    ADD CONSTRAINT changesets_pkey PRIMARY KEY (id);


--
-- Name: content_items content_items_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_items
    ADD CONSTRAINT content_items_pkey PRIMARY KEY (portal_id, content_type, hubspot_id);


--
-- Name: content_rejects content_rejects_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_rejects
    ADD CONSTRAINT content_rejects_pkey PRIMARY KEY (id);


--
-- Name: content_syncs content_syncs_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_syncs
    ADD CONSTRAINT content_syncs_pkey PRIMARY KEY (portal_id, content_type);


--
-- Name: content_type content_type_known; Type: CHECK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER DOMAIN public.content_type
    ADD CONSTRAINT content_type_known CHECK ((VALUE = ANY (ARRAY['blog'::text, 'blog_author'::text, 'blog_post'::text, 'blog_tag'::text, 'hubdb_row'::text, 'hubdb_table'::text, 'landing_page'::text, 'site_page'::text, 'url_redirect'::text]))) NOT VALID;


--
-- Name: content_types content_types_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_types
    ADD CONSTRAINT content_types_pkey PRIMARY KEY (name);


--
-- Name: content_versions content_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_versions
    ADD CONSTRAINT content_versions_pkey PRIMARY KEY (portal_id, content_type, hubspot_id, version);


--
-- Name: dashboard_confirmations dashboard_confirmations_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.dashboard_confirmations
    ADD CONSTRAINT dashboard_confirmations_pkey PRIMARY KEY (nonce_hash);


--
-- Name: exports exports_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_pkey PRIMARY KEY (id);


--
-- Name: exports exports_run_id_content_type_format_key; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_run_id_content_type_format_key UNIQUE (run_id, content_type, format);


--
-- Name: fetch_reads fetch_reads_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_pkey PRIMARY KEY (job_id);


--
-- Name: fetch_seen fetch_seen_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.fetch_seen
    ADD CONSTRAINT fetch_seen_pkey PRIMARY KEY (job_id, hubspot_id);


--
-- Name: hubspot_minutes hubspot_minutes_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.hubspot_minutes
    ADD CONSTRAINT hubspot_minutes_pkey PRIMARY KEY (minute);


--
-- Name: job_leases job_leases_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.job_leases
    ADD CONSTRAINT job_leases_pkey PRIMARY KEY (kind);


--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);


--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);


--
-- Name: operator_actions operator_actions_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (id);


--
-- Name: portal_members portal_members_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_pkey PRIMARY KEY (portal_id, user_id);


--
-- Name: portals portals_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.portals
    ADD CONSTRAINT portals_pkey PRIMARY KEY (id);


--
-- Name: push_intents push_intents_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.push_intents
    ADD CONSTRAINT push_intents_pkey PRIMARY KEY (id);


--
-- Name: runs runs_id_portal_id_key; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_id_portal_id_key UNIQUE (id, portal_id);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: schedules schedules_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);


--
-- Name: schema_functions schema_functions_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.schema_functions
    ADD CONSTRAINT schema_functions_pkey PRIMARY KEY (file);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: workers workers_pkey; Type: CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (id);


--
-- Name: changesets_portal_created_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX changesets_portal_created_idx ON public.changesets USING btree (portal_id, created_at DESC);


--
-- Name: content_items_deleted_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_items_deleted_idx ON public.content_items USING btree (portal_id, deleted_at) WHERE (deleted_at IS NOT NULL);


--
-- Name: content_items_first_version_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_items_first_version_idx ON public.content_items USING btree (portal_id, first_version_at, first_version_id);


--
-- Name: content_items_translated_from_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_items_translated_from_idx ON public.content_items USING btree (portal_id, content_type, translated_from_id) WHERE (translated_from_id IS NOT NULL);


--
-- Name: content_rejects_once_per_run; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE UNIQUE INDEX content_rejects_once_per_run ON public.content_rejects USING btree (run_id, content_type, hubspot_id) WHERE (hubspot_id IS NOT NULL);


--
-- Name: content_rejects_once_per_run_without_id; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE UNIQUE INDEX content_rejects_once_per_run_without_id ON public.content_rejects USING btree (run_id, content_type, raw_size, md5(raw)) WHERE (hubspot_id IS NULL);


--
-- Name: content_rejects_portal_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_rejects_portal_idx ON public.content_rejects USING btree (portal_id, content_type, hubspot_id);


--
-- Name: content_rejects_run_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_rejects_run_idx ON public.content_rejects USING btree (run_id, content_type);


--
-- Name: content_versions_changes_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX content_versions_changes_idx ON public.content_versions USING btree (portal_id, recorded_at, id);


--
-- Name: dashboard_confirmations_expires_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX dashboard_confirmations_expires_idx ON public.dashboard_confirmations USING btree (expires_at);


--
-- Name: exports_portal_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX exports_portal_idx ON public.exports USING btree (portal_id, created_at DESC);


--
-- Name: fetch_reads_run_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX fetch_reads_run_idx ON public.fetch_reads USING btree (run_id);


--
-- Name: jobs_claim_order_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_claim_order_idx ON public.jobs USING btree (priority DESC, COALESCE(fair_at, run_after), id) WHERE ((status)::text = 'pending'::text);


--
-- Name: jobs_claimable_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_claimable_idx ON public.jobs USING btree (run_after, id) WHERE ((status)::text = 'pending'::text);


--
-- Name: jobs_completed_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_completed_idx ON public.jobs USING btree (finished_at) INCLUDE (kind) WHERE (((status)::text = 'completed'::text) AND (finished_at IS NOT NULL));


--
-- Name: jobs_dead_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_dead_idx ON public.jobs USING btree (status, id) INCLUDE (kind) WHERE ((status)::text = ANY (ARRAY['failed'::text, 'stopped'::text]));


--
-- Name: jobs_fetched_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_fetched_idx ON public.jobs USING btree (portal_id, content_type, finished_at) INCLUDE (status) WHERE (((kind)::text = 'fetch'::text) AND (finished_at IS NOT NULL));


--
-- Name: jobs_idempotency_key_uniq; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE UNIQUE INDEX jobs_idempotency_key_uniq ON public.jobs USING btree (idempotency_key) WHERE (idempotency_key IS NOT NULL);


--
-- Name: jobs_in_flight_uniq; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE UNIQUE INDEX jobs_in_flight_uniq ON public.jobs USING btree (portal_id, kind, content_type) WHERE ((status)::text = ANY (ARRAY['pending'::text, 'running'::text]));


--
-- Name: jobs_lease_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_lease_idx ON public.jobs USING btree (heartbeat_at) WHERE (((status)::text = 'running'::text) AND (heartbeat_at IS NOT NULL));


--
-- Name: jobs_run_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX jobs_run_idx ON public.jobs USING btree (run_id);


--
-- Name: notifications_run_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX notifications_run_idx ON public.notifications USING btree (run_id);


--
-- Name: notifications_user_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX notifications_user_idx ON public.notifications USING btree (user_id, created_at DESC);


--
-- Name: portal_members_user_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX portal_members_user_idx ON public.portal_members USING btree (user_id);


--
-- Name: portals_owner_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX portals_owner_idx ON public.portals USING btree (owner_id);


--
-- Name: push_intents_job_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX push_intents_job_idx ON public.push_intents USING btree (job_id);


--
-- Name: push_intents_open_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX push_intents_open_idx ON public.push_intents USING btree (changeset_id, content_type) WHERE (state <> 'decided'::text);


--
-- Name: runs_created_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX runs_created_idx ON public.runs USING btree (created_at, id);


--
-- Name: runs_open_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX runs_open_idx ON public.runs USING btree (id) WHERE ((status)::text = ANY (ARRAY['pending'::text, 'running'::text]));


--
-- Name: runs_portal_created_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX runs_portal_created_idx ON public.runs USING btree (portal_id, created_at DESC);


--
-- Name: runs_status_created_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX runs_status_created_idx ON public.runs USING btree (status, created_at, id);


--
-- Name: schedules_due_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX schedules_due_idx ON public.schedules USING btree (next_run_at) WHERE enabled;


--
-- Name: workers_last_seen_idx; Type: INDEX; Schema: public; Owner: smuves_owner
--

CREATE INDEX workers_last_seen_idx ON public.workers USING btree (last_seen_at);


--
-- Name: content_items content_history_begin; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_history_begin BEFORE INSERT ON public.content_items FOR EACH ROW WHEN ((new.version IS NULL)) EXECUTE FUNCTION public.content_history_begin();


--
-- Name: content_items content_history_inserted; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_history_inserted AFTER INSERT ON public.content_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_inserted();


--
-- Name: content_items content_history_removed; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_history_removed AFTER DELETE ON public.content_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_removed();


--
-- Name: content_items content_history_updated; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_history_updated BEFORE UPDATE OF content_hash, archived, deleted_at ON public.content_items FOR EACH ROW WHEN (((old.content_hash IS DISTINCT FROM new.content_hash) OR (old.archived IS DISTINCT FROM new.archived) OR ((old.deleted_at IS NULL) <> (new.deleted_at IS NULL)))) EXECUTE FUNCTION public.content_history_updated();


--
-- Name: content_items content_items_portal_exists; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_items_portal_exists AFTER INSERT ON public.content_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_items_portal_exists();


--
-- Name: content_items content_items_portal_moved; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_items_portal_moved AFTER UPDATE OF portal_id ON public.content_items FOR EACH ROW WHEN ((old.portal_id IS DISTINCT FROM new.portal_id)) EXECUTE FUNCTION public.content_items_portal_exists();


--
-- Name: content_types content_types_constrain_domain; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_types_constrain_domain AFTER INSERT ON public.content_types FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_constrain_domain();


--
-- Name: content_types content_types_only_grow; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER content_types_only_grow BEFORE DELETE OR UPDATE OR TRUNCATE ON public.content_types FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_only_grow();


--
-- Name: jobs jobs_changesets_follow; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER jobs_changesets_follow AFTER UPDATE OF status ON public.jobs FOR EACH ROW WHEN ((((new.kind)::text = 'push'::text) AND ((old.status)::text IS DISTINCT FROM (new.status)::text) AND ((new.status)::text = ANY (ARRAY['completed'::text, 'failed'::text, 'stopped'::text])))) EXECUTE FUNCTION public.changesets_follow_push();


--
-- Name: jobs jobs_exports_follow; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER jobs_exports_follow AFTER UPDATE OF status ON public.jobs FOR EACH ROW WHEN ((((new.kind)::text = 'export'::text) AND ((old.status)::text IS DISTINCT FROM (new.status)::text))) EXECUTE FUNCTION public.exports_follow_job();


--
-- Name: jobs jobs_fetch_seen_forget_deleted; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER jobs_fetch_seen_forget_deleted AFTER DELETE ON public.jobs REFERENCING OLD TABLE AS old_jobs FOR EACH STATEMENT EXECUTE FUNCTION public.fetch_seen_forget_deleted_jobs();


--
-- Name: jobs jobs_fetch_seen_forget_finished; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER jobs_fetch_seen_forget_finished AFTER UPDATE ON public.jobs REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION public.fetch_seen_forget_finished_jobs();


--
-- Name: jobs jobs_notify_inserted; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER jobs_notify_inserted AFTER INSERT ON public.jobs REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION public.jobs_notify_inserted();


--
-- Name: portals portals_add_owner_member; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER portals_add_owner_member AFTER INSERT ON public.portals FOR EACH ROW EXECUTE FUNCTION public.portals_add_owner_member();


--
-- Name: portals portals_delete_content; Type: TRIGGER; Schema: public; Owner: smuves_owner
--

CREATE TRIGGER portals_delete_content AFTER DELETE ON public.portals REFERENCING OLD TABLE AS old_portals FOR EACH STATEMENT EXECUTE FUNCTION public.portals_delete_content();


--
-- Name: changeset_items changeset_items_changeset_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changeset_items
    ADD CONSTRAINT changeset_items_changeset_fkey FOREIGN KEY (changeset_id, portal_id) REFERENCES public.changesets(id, portal_id) ON DELETE CASCADE;


--
-- Name: changesets changesets_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changesets
    ADD CONSTRAINT changesets_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE SET NULL;


--
-- Name: changesets changesets_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changesets
    ADD CONSTRAINT changesets_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: changesets changesets_rolls_back_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.changesets
    ADD CONSTRAINT changesets_rolls_back_fkey FOREIGN KEY (rolls_back, portal_id) REFERENCES public.changesets(id, portal_id) ON DELETE CASCADE;


--
-- Name: content_rejects content_rejects_run_id_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_rejects
    ADD CONSTRAINT content_rejects_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;


--
-- Name: content_syncs content_syncs_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.content_syncs
    ADD CONSTRAINT content_syncs_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: exports exports_run_id_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.exports
    ADD CONSTRAINT exports_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;


--
-- Name: fetch_reads fetch_reads_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: fetch_reads fetch_reads_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.fetch_reads
    ADD CONSTRAINT fetch_reads_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: jobs jobs_run_id_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_run_id_portal_id_fkey FOREIGN KEY (run_id, portal_id) REFERENCES public.runs(id, portal_id) ON DELETE CASCADE;


--
-- Name: notifications notifications_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: notifications notifications_schedule_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_schedule_id_fkey FOREIGN KEY (schedule_id) REFERENCES public.schedules(id) ON DELETE SET NULL;


--
-- Name: notifications notifications_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: portal_members portal_members_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: portal_members portal_members_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.portal_members
    ADD CONSTRAINT portal_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: portals portals_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.portals
    ADD CONSTRAINT portals_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE;


--
-- Name: push_intents push_intents_changeset_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.push_intents
    ADD CONSTRAINT push_intents_changeset_fkey FOREIGN KEY (changeset_id, portal_id) REFERENCES public.changesets(id, portal_id) ON DELETE CASCADE;


--
-- Name: push_intents push_intents_job_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.push_intents
    ADD CONSTRAINT push_intents_job_id_fkey FOREIGN KEY (job_id) REFERENCES public.jobs(id) ON DELETE CASCADE;


--
-- Name: runs runs_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE SET NULL;


--
-- Name: runs runs_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: schedules schedules_owner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES public.app_users(id) ON UPDATE CASCADE ON DELETE SET NULL;


--
-- Name: schedules schedules_portal_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: smuves_owner
--

ALTER TABLE ONLY public.schedules
    ADD CONSTRAINT schedules_portal_id_fkey FOREIGN KEY (portal_id) REFERENCES public.portals(id) ON DELETE CASCADE;


--
-- Name: app_users; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.app_users ENABLE ROW LEVEL SECURITY;

--
-- Name: app_users app_users_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY app_users_app ON public.app_users TO smuves_app USING (((id = public.current_app_user()) OR (id IN ( SELECT m.user_id
   FROM public.portal_members m
  WHERE (m.portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))))));


--
-- Name: app_users app_users_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY app_users_owner_all ON public.app_users TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: changeset_items; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.changeset_items ENABLE ROW LEVEL SECURITY;

--
-- Name: changeset_items changeset_items_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_app ON public.changeset_items TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: changeset_items changeset_items_app_editor_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_app_editor_insert ON public.changeset_items AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK (((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)) AND (state = ANY (ARRAY['pending'::text, 'unchanged'::text, 'invalid'::text]))));


--
-- Name: changeset_items changeset_items_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_owner_all ON public.changeset_items TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: changeset_items changeset_items_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_worker ON public.changeset_items TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: changeset_items changeset_items_worker_lease; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_worker_lease ON public.changeset_items AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: changeset_items changeset_items_worker_push; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changeset_items_worker_push ON public.changeset_items AS RESTRICTIVE FOR UPDATE TO smuves_worker USING ((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset))) WITH CHECK ((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)));


--
-- Name: changesets; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.changesets ENABLE ROW LEVEL SECURITY;

--
-- Name: changesets changesets_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changesets_app ON public.changesets TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: changesets changesets_app_editor_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changesets_app_editor_insert ON public.changesets AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK (((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)) AND (owner_id = public.current_app_user())));


--
-- Name: changesets changesets_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changesets_owner_all ON public.changesets TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: changesets changesets_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changesets_worker ON public.changesets TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: changesets changesets_worker_lease; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY changesets_worker_lease ON public.changesets AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_items; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_items ENABLE ROW LEVEL SECURITY;

--
-- Name: content_items content_items_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_items_app ON public.content_items TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: content_items content_items_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_items_owner_all ON public.content_items TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: content_items content_items_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_items_worker ON public.content_items TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: content_items content_items_worker_lease; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_items_worker_lease ON public.content_items AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_rejects; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_rejects ENABLE ROW LEVEL SECURITY;

--
-- Name: content_rejects content_rejects_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_rejects_app ON public.content_rejects TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: content_rejects content_rejects_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_rejects_owner_all ON public.content_rejects TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: content_rejects content_rejects_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_rejects_worker ON public.content_rejects TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: content_rejects content_rejects_worker_lease_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_rejects_worker_lease_insert ON public.content_rejects AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_rejects content_rejects_worker_lease_select; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_rejects_worker_lease_select ON public.content_rejects AS RESTRICTIVE FOR SELECT TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_syncs; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_syncs ENABLE ROW LEVEL SECURITY;

--
-- Name: content_syncs content_syncs_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_syncs_app ON public.content_syncs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: content_syncs content_syncs_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_syncs_owner_all ON public.content_syncs TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: content_syncs content_syncs_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_syncs_worker ON public.content_syncs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: content_syncs content_syncs_worker_lease_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_syncs_worker_lease_insert ON public.content_syncs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_syncs content_syncs_worker_lease_update; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_syncs_worker_lease_update ON public.content_syncs AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: content_versions; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.content_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: content_versions content_versions_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_versions_app ON public.content_versions TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: content_versions content_versions_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_versions_owner_all ON public.content_versions TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: content_versions content_versions_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_versions_worker ON public.content_versions TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: content_versions content_versions_worker_lease_select; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY content_versions_worker_lease_select ON public.content_versions AS RESTRICTIVE FOR SELECT TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: dashboard_confirmations; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.dashboard_confirmations ENABLE ROW LEVEL SECURITY;

--
-- Name: dashboard_confirmations dashboard_confirmations_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY dashboard_confirmations_owner_all ON public.dashboard_confirmations TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: exports; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.exports ENABLE ROW LEVEL SECURITY;

--
-- Name: exports exports_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_app ON public.exports TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: exports exports_app_editor_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_app_editor_insert ON public.exports AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: exports exports_app_editor_update; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_app_editor_update ON public.exports AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: exports exports_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_owner_all ON public.exports TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: exports exports_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_worker ON public.exports TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: exports exports_worker_lease_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_worker_lease_insert ON public.exports AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: exports exports_worker_lease_update; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY exports_worker_lease_update ON public.exports AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: fetch_reads; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.fetch_reads ENABLE ROW LEVEL SECURITY;

--
-- Name: fetch_reads fetch_reads_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_reads_app ON public.fetch_reads TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: fetch_reads fetch_reads_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_reads_owner_all ON public.fetch_reads TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: fetch_reads fetch_reads_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_reads_worker ON public.fetch_reads TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: fetch_reads fetch_reads_worker_lease_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_reads_worker_lease_insert ON public.fetch_reads AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: fetch_reads fetch_reads_worker_lease_update; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_reads_worker_lease_update ON public.fetch_reads AS RESTRICTIVE FOR UPDATE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: fetch_seen; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.fetch_seen ENABLE ROW LEVEL SECURITY;

--
-- Name: fetch_seen fetch_seen_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_seen_owner_all ON public.fetch_seen TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: fetch_seen fetch_seen_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_seen_worker ON public.fetch_seen TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: fetch_seen fetch_seen_worker_lease; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY fetch_seen_worker_lease ON public.fetch_seen AS RESTRICTIVE TO smuves_worker USING (( SELECT public.worker_holds_lease() AS worker_holds_lease)) WITH CHECK (( SELECT public.worker_holds_lease() AS worker_holds_lease));


--
-- Name: hubspot_minutes; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.hubspot_minutes ENABLE ROW LEVEL SECURITY;

--
-- Name: hubspot_minutes hubspot_minutes_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY hubspot_minutes_owner_all ON public.hubspot_minutes TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: jobs; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: jobs jobs_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY jobs_app ON public.jobs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: jobs jobs_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY jobs_owner_all ON public.jobs TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: jobs jobs_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY jobs_worker ON public.jobs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: notifications; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.notifications ENABLE ROW LEVEL SECURITY;

--
-- Name: notifications notifications_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY notifications_app ON public.notifications TO smuves_app USING ((user_id = public.current_app_user()));


--
-- Name: notifications notifications_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY notifications_owner_all ON public.notifications TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: notifications notifications_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY notifications_worker ON public.notifications TO smuves_worker USING ((run_id IN ( SELECT r.id
   FROM public.runs r
  WHERE (r.portal_id = public.current_app_portal())))) WITH CHECK ((run_id IN ( SELECT r.id
   FROM public.runs r
  WHERE (r.portal_id = public.current_app_portal()))));


--
-- Name: notifications notifications_worker_schedule; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY notifications_worker_schedule ON public.notifications TO smuves_worker USING ((schedule_id IN ( SELECT s.id
   FROM public.schedules s
  WHERE (s.portal_id = public.current_app_portal())))) WITH CHECK ((schedule_id IN ( SELECT s.id
   FROM public.schedules s
  WHERE (s.portal_id = public.current_app_portal()))));


--
-- Name: operator_actions; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.operator_actions ENABLE ROW LEVEL SECURITY;

--
-- Name: operator_actions operator_actions_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY operator_actions_owner_all ON public.operator_actions TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: portal_members; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.portal_members ENABLE ROW LEVEL SECURITY;

--
-- Name: portal_members portal_members_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portal_members_app ON public.portal_members TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: portal_members portal_members_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portal_members_owner_all ON public.portal_members TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: portals; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.portals ENABLE ROW LEVEL SECURITY;

--
-- Name: portals portals_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portals_app ON public.portals TO smuves_app USING (((id IN ( SELECT public.member_portal_ids() AS member_portal_ids)) OR (owner_id = public.current_app_user()))) WITH CHECK (((owner_id = public.current_app_user()) OR (id IN ( SELECT public.member_portal_ids() AS member_portal_ids))));


--
-- Name: portals portals_app_delete_owner; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portals_app_delete_owner ON public.portals AS RESTRICTIVE FOR DELETE TO smuves_app USING ((owner_id = public.current_app_user()));


--
-- Name: portals portals_app_update_owner; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portals_app_update_owner ON public.portals AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((owner_id = public.current_app_user())) WITH CHECK ((owner_id = public.current_app_user()));


--
-- Name: portals portals_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portals_owner_all ON public.portals TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: portals portals_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY portals_worker ON public.portals TO smuves_worker USING ((id = public.current_app_portal()));


--
-- Name: push_intents; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.push_intents ENABLE ROW LEVEL SECURITY;

--
-- Name: push_intents push_intents_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY push_intents_owner_all ON public.push_intents TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: push_intents push_intents_worker_push; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY push_intents_worker_push ON public.push_intents TO smuves_worker USING (((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)) AND (portal_id = public.current_app_portal()))) WITH CHECK (((changeset_id = ( SELECT public.push_job_changeset() AS push_job_changeset)) AND (portal_id = public.current_app_portal()) AND (job_id = (NULLIF(current_setting('app.job_id'::text, true), ''::text))::bigint)));


--
-- Name: runs; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.runs ENABLE ROW LEVEL SECURITY;

--
-- Name: runs runs_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_app ON public.runs TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: runs runs_app_editor_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_app_editor_insert ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: runs runs_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_owner_all ON public.runs TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: runs runs_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_worker ON public.runs TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: runs runs_worker_create_scheduled; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_worker_create_scheduled ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (public.worker_may_create_run(portal_id, owner_id, kind, (content_types)::text[]));


--
-- Name: runs runs_worker_full_read; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY runs_worker_full_read ON public.runs AS RESTRICTIVE FOR INSERT TO smuves_worker WITH CHECK (((NOT full_read) OR public.operator_session()));


--
-- Name: schedules; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.schedules ENABLE ROW LEVEL SECURITY;

--
-- Name: schedules schedules_app; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_app ON public.schedules TO smuves_app USING ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.member_portal_ids() AS member_portal_ids)));


--
-- Name: schedules schedules_app_editor_delete; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_app_editor_delete ON public.schedules AS RESTRICTIVE FOR DELETE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: schedules schedules_app_editor_insert; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_app_editor_insert ON public.schedules AS RESTRICTIVE FOR INSERT TO smuves_app WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: schedules schedules_app_editor_update; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_app_editor_update ON public.schedules AS RESTRICTIVE FOR UPDATE TO smuves_app USING ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids))) WITH CHECK ((portal_id IN ( SELECT public.editor_portal_ids() AS editor_portal_ids)));


--
-- Name: schedules schedules_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_owner_all ON public.schedules TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: schedules schedules_worker; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY schedules_worker ON public.schedules TO smuves_worker USING ((portal_id = public.current_app_portal())) WITH CHECK ((portal_id = public.current_app_portal()));


--
-- Name: workers; Type: ROW SECURITY; Schema: public; Owner: smuves_owner
--

ALTER TABLE public.workers ENABLE ROW LEVEL SECURITY;

--
-- Name: workers workers_owner_all; Type: POLICY; Schema: public; Owner: smuves_owner
--

CREATE POLICY workers_owner_all ON public.workers TO smuves_owner USING (true) WITH CHECK (true);


--
-- Name: SCHEMA public; Type: ACL; Schema: -; Owner: pg_database_owner
--

GRANT CREATE ON SCHEMA public TO smuves_owner;


--
-- Name: FUNCTION advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION app_user_sign_in(p_email text, p_email_verified boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.app_user_sign_in(p_email text, p_email_verified boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.app_user_sign_in(p_email text, p_email_verified boolean) TO smuves_app;


--
-- Name: FUNCTION changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) TO smuves_app;


--
-- Name: FUNCTION changesets_follow_push(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.changesets_follow_push() FROM PUBLIC;


--
-- Name: COLUMN jobs.id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(id) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.run_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(run_id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(run_id) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(portal_id) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.kind; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(kind) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(kind) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_type) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(content_type) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.status; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(status) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(status) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.attempts; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(attempts) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(attempts) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.max_attempts; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(max_attempts) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(max_attempts) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.run_after; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(run_after) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(run_after) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.locked_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(locked_at) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.locked_by; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(locked_by) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.heartbeat_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(heartbeat_at) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.total; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(total) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(total) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.processed; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(processed) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(processed) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.cursor; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(cursor) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.last_error; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(last_error) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.last_error_public; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(last_error_public) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(last_error_public) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.idempotency_key; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(idempotency_key) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.created_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(created_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(created_at) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.finished_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(finished_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(finished_at) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.priority; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(priority) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(priority) ON TABLE public.jobs TO smuves_worker;


--
-- Name: COLUMN jobs.fair_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(fair_at) ON TABLE public.jobs TO smuves_app;
GRANT SELECT(fair_at) ON TABLE public.jobs TO smuves_worker;


--
-- Name: FUNCTION checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.checkpoint_job(p_job_id bigint, p_lease_token uuid, p_cursor text, p_processed bigint, p_total bigint, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: COLUMN schedules.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.schedules TO smuves_worker;


--
-- Name: COLUMN schedules.owner_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(owner_id) ON TABLE public.schedules TO smuves_worker;


--
-- Name: COLUMN schedules.content_types; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_types) ON TABLE public.schedules TO smuves_worker;


--
-- Name: COLUMN schedules.enabled; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(enabled) ON TABLE public.schedules TO smuves_worker;


--
-- Name: COLUMN schedules.next_run_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(next_run_at) ON TABLE public.schedules TO smuves_worker;


--
-- Name: FUNCTION claim_due_schedule(p_skip bigint[], p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.claim_due_schedule(p_skip bigint[], p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.claim_due_schedule(p_skip bigint[], p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.claim_jobs(p_worker text, p_kinds text[], p_limit integer, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer, p_settle_run_ids bigint[]) TO smuves_worker;


--
-- Name: FUNCTION claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone, p_portal_max_running integer); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.claim_next_job(p_worker text, p_kinds text[], p_now timestamp with time zone, p_portal_max_running integer) FROM PUBLIC;


--
-- Name: FUNCTION complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.complete_job(p_job_id bigint, p_lease_token uuid, p_processed bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION public.complete_jobs(p_job_ids bigint[], p_lease_tokens uuid[], p_processed bigint[], p_now timestamp with time zone, p_settle boolean) TO smuves_worker;


--
-- Name: FUNCTION content_history_begin(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_begin() FROM PUBLIC;


--
-- Name: TABLE content_versions; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.content_versions TO smuves_app;


--
-- Name: COLUMN content_versions.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.content_versions TO smuves_worker;


--
-- Name: COLUMN content_versions.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_type) ON TABLE public.content_versions TO smuves_worker;


--
-- Name: COLUMN content_versions.hubspot_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(hubspot_id) ON TABLE public.content_versions TO smuves_worker;


--
-- Name: COLUMN content_versions.version; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(version) ON TABLE public.content_versions TO smuves_worker;


--
-- Name: SEQUENCE content_versions_id_seq; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT USAGE ON SEQUENCE public.content_versions_id_seq TO smuves_worker;


--
-- Name: TABLE content_items; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(portal_id),UPDATE(portal_id) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_type) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(content_type),UPDATE(content_type) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.hubspot_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(hubspot_id) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(hubspot_id),UPDATE(hubspot_id) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.name; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(name) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(name),UPDATE(name) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.slug; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(slug) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(slug),UPDATE(slug) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.url; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(url) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(url),UPDATE(url) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.state; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(state) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(state),UPDATE(state) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.language; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(language) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(language),UPDATE(language) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.hubspot_updated_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(hubspot_updated_at) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(hubspot_updated_at),UPDATE(hubspot_updated_at) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.archived; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(archived) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(archived),UPDATE(archived) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.deleted_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(deleted_at) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(deleted_at),UPDATE(deleted_at) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.data; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(data) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(data),UPDATE(data) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.content_hash; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_hash) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(content_hash),UPDATE(content_hash) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.first_seen_run; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(first_seen_run),UPDATE(first_seen_run) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.changed_run; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(changed_run),UPDATE(changed_run) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.changed_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(changed_at) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(changed_at),UPDATE(changed_at) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.translated_from_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(translated_from_id) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(translated_from_id),UPDATE(translated_from_id) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.version; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(version) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(version) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.first_version_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(first_version_id) ON TABLE public.content_items TO smuves_app;


--
-- Name: COLUMN content_items.first_version_run; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(first_version_run) ON TABLE public.content_items TO smuves_app;
GRANT INSERT(first_version_run) ON TABLE public.content_items TO smuves_worker;


--
-- Name: COLUMN content_items.first_version_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(first_version_at) ON TABLE public.content_items TO smuves_app;


--
-- Name: FUNCTION content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean) FROM PUBLIC;


--
-- Name: FUNCTION content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean) FROM PUBLIC;


--
-- Name: FUNCTION content_history_inserted(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_inserted() FROM PUBLIC;


--
-- Name: FUNCTION content_history_removed(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_removed() FROM PUBLIC;


--
-- Name: FUNCTION content_history_run(p_portal_id bigint, p_content_type text); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) TO smuves_worker;


--
-- Name: FUNCTION content_history_updated(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_history_updated() FROM PUBLIC;


--
-- Name: FUNCTION content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) TO smuves_worker;


--
-- Name: FUNCTION content_items_portal_exists(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_items_portal_exists() FROM PUBLIC;


--
-- Name: FUNCTION content_portals_lock(p_ids bigint[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_portals_lock(p_ids bigint[]) FROM PUBLIC;


--
-- Name: FUNCTION content_types_constrain_domain(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_types_constrain_domain() FROM PUBLIC;


--
-- Name: FUNCTION content_types_only_grow(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.content_types_only_grow() FROM PUBLIC;


--
-- Name: FUNCTION current_app_portal(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.current_app_portal() FROM PUBLIC;
GRANT ALL ON FUNCTION public.current_app_portal() TO smuves_worker;


--
-- Name: FUNCTION current_app_user(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.current_app_user() FROM PUBLIC;
GRANT ALL ON FUNCTION public.current_app_user() TO smuves_app;


--
-- Name: FUNCTION disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION editor_portal_ids(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.editor_portal_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION public.editor_portal_ids() TO smuves_app;


--
-- Name: FUNCTION effective_now(p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.effective_now(p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) TO smuves_app;
GRANT ALL ON FUNCTION public.enqueue_job(p_run_id bigint, p_content_type text, p_priority smallint, p_max_attempts integer, p_run_after timestamp with time zone, p_total bigint, p_idempotency_key text, p_schedule_id bigint) TO smuves_worker;


--
-- Name: FUNCTION exports_follow_job(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.exports_follow_job() FROM PUBLIC;


--
-- Name: FUNCTION fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_job(p_job_id bigint, p_lease_token uuid, p_error text, p_retryable boolean, p_backoff_base interval, p_backoff_max interval, p_jitter_ratio double precision, p_now timestamp with time zone, p_error_public text) TO smuves_worker;


--
-- Name: FUNCTION fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.fail_run_token_refused(p_job_id bigint, p_lease_token uuid, p_error text, p_error_public text, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION fetch_seen_forget_deleted_jobs(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.fetch_seen_forget_deleted_jobs() FROM PUBLIC;


--
-- Name: FUNCTION fetch_seen_forget_finished_jobs(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.fetch_seen_forget_finished_jobs() FROM PUBLIC;


--
-- Name: FUNCTION heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.heartbeat_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.job_lease_expired(p_job public.jobs, p_now timestamp with time zone, p_fetch_lease interval, p_export_lease interval, p_push_lease interval) FROM PUBLIC;


--
-- Name: FUNCTION job_to_pending(p_job public.jobs); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.job_to_pending(p_job public.jobs) FROM PUBLIC;


--
-- Name: FUNCTION job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.job_within_portal_cap(p_portal_id bigint, p_job_id bigint, p_priority smallint, p_place timestamp with time zone, p_now timestamp with time zone, p_run_id bigint, p_portal_max_running integer) FROM PUBLIC;


--
-- Name: FUNCTION jobs_notify_inserted(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.jobs_notify_inserted() FROM PUBLIC;


--
-- Name: FUNCTION mark_portal_token_refused(p_portal_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.mark_portal_token_refused(p_portal_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.mark_portal_token_refused(p_portal_id bigint) TO smuves_app;


--
-- Name: FUNCTION member_portal_ids(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.member_portal_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION public.member_portal_ids() TO smuves_app;


--
-- Name: FUNCTION metrics_job_durations(p_bounds double precision[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.metrics_job_durations(p_bounds double precision[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.metrics_job_durations(p_bounds double precision[]) TO smuves_app;


--
-- Name: FUNCTION metrics_jobs(p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.metrics_jobs(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.metrics_jobs(p_now timestamp with time zone) TO smuves_app;


--
-- Name: FUNCTION metrics_workers_live(p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.metrics_workers_live(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.metrics_workers_live(p_now timestamp with time zone) TO smuves_app;


--
-- Name: FUNCTION notify_run_owners(p_notices public.run_notice[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.notify_run_owners(p_notices public.run_notice[]) FROM PUBLIC;


--
-- Name: TABLE runs; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.runs TO smuves_worker;


--
-- Name: COLUMN runs.id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(id) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(portal_id) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(portal_id),INSERT(portal_id) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.owner_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(owner_id) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(owner_id),INSERT(owner_id) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.kind; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(kind) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(kind),INSERT(kind) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.status; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(status) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.content_types; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(content_types) ON TABLE public.runs TO smuves_worker;
GRANT SELECT(content_types),INSERT(content_types) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.created_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(created_at) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.started_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(started_at) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.finished_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(finished_at) ON TABLE public.runs TO smuves_app;


--
-- Name: COLUMN runs.full_read; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(full_read) ON TABLE public.runs TO smuves_worker;
GRANT INSERT(full_read) ON TABLE public.runs TO smuves_app;


--
-- Name: FUNCTION notify_settled_runs(p_runs public.runs[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.notify_settled_runs(p_runs public.runs[]) FROM PUBLIC;


--
-- Name: FUNCTION operator_session(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.operator_session() FROM PUBLIC;
GRANT ALL ON FUNCTION public.operator_session() TO smuves_worker;


--
-- Name: FUNCTION park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.park_job(p_job_id bigint, p_lease_token uuid, p_until timestamp with time zone, p_reason text, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION portal_token(p_job_id bigint, p_lease_token uuid); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) TO smuves_worker;


--
-- Name: FUNCTION portal_token_for_member(p_portal_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.portal_token_for_member(p_portal_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.portal_token_for_member(p_portal_id bigint) TO smuves_app;


--
-- Name: FUNCTION portal_token_for_operator(p_portal_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.portal_token_for_operator(p_portal_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION portals_add_owner_member(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.portals_add_owner_member() FROM PUBLIC;


--
-- Name: FUNCTION portals_delete_content(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.portals_delete_content() FROM PUBLIC;


--
-- Name: FUNCTION prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone, p_after_id bigint, p_limit integer, p_dry_run boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone, p_after_id bigint, p_limit integer, p_dry_run boolean) FROM PUBLIC;


--
-- Name: FUNCTION prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer, p_dry_run boolean); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer, p_dry_run boolean) FROM PUBLIC;


--
-- Name: FUNCTION prune_runs(p_older_than interval, p_dry_run boolean, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.prune_runs(p_older_than interval, p_dry_run boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION push_job_changeset(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.push_job_changeset() FROM PUBLIC;
GRANT ALL ON FUNCTION public.push_job_changeset() TO smuves_worker;


--
-- Name: FUNCTION push_versions_attribute(p_content_type text, p_hubspot_ids text[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) TO smuves_worker;


--
-- Name: FUNCTION reconcile_stuck_runs(p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.reconcile_stuck_runs(p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.release_job(p_job_id bigint, p_lease_token uuid, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION requeue_job(p_job_id bigint, p_from_start boolean, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.requeue_job(p_job_id bigint, p_from_start boolean, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION retry_failed_jobs(p_portal_id bigint, p_run_id bigint, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.retry_failed_jobs(p_portal_id bigint, p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION run_failures_note(p_run_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.run_failures_note(p_run_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION run_finished(p_run_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.run_finished(p_run_id bigint) FROM PUBLIC;


--
-- Name: FUNCTION run_rejects_note(p_run_id bigint); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.run_rejects_note(p_run_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.run_rejects_note(p_run_id bigint) TO smuves_app;


--
-- Name: FUNCTION run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.run_to_stopped(p_run_id bigint, p_reason text, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.settle_locked_runs(p_run_ids bigint[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION settle_runs(p_run_ids bigint[], p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.settle_runs(p_run_ids bigint[], p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION stop_run(p_run_id bigint, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.stop_run(p_run_id bigint, p_now timestamp with time zone) TO smuves_app;


--
-- Name: FUNCTION transfer_portal(p_portal_id bigint, p_owner_id uuid); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.transfer_portal(p_portal_id bigint, p_owner_id uuid) FROM PUBLIC;


--
-- Name: FUNCTION worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_alive(p_last_seen timestamp with time zone, p_every interval, p_now timestamp with time zone) FROM PUBLIC;


--
-- Name: FUNCTION worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.worker_heartbeat(p_id bigint, p_token uuid, p_job_ids bigint[], p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION worker_holds_lease(); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_holds_lease() FROM PUBLIC;
GRANT ALL ON FUNCTION public.worker_holds_lease() TO smuves_worker;


--
-- Name: FUNCTION worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION public.worker_may_create_run(p_portal_id bigint, p_owner_id uuid, p_kind public.job_kind, p_types text[]) TO smuves_worker;


--
-- Name: FUNCTION worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION public.worker_register(p_name text, p_host text, p_pid integer, p_kinds text[], p_concurrency integer, p_run_id bigint, p_heartbeat_every interval, p_now timestamp with time zone) TO smuves_worker;


--
-- Name: FUNCTION worker_unregister(p_id bigint, p_token uuid); Type: ACL; Schema: public; Owner: smuves_owner
--

REVOKE ALL ON FUNCTION public.worker_unregister(p_id bigint, p_token uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION public.worker_unregister(p_id bigint, p_token uuid) TO smuves_worker;


--
-- Name: TABLE changeset_items; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.changeset_items TO smuves_app;
GRANT SELECT ON TABLE public.changeset_items TO smuves_worker;


--
-- Name: COLUMN changeset_items.changeset_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(changeset_id) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(portal_id) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(content_type) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.hubspot_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(hubspot_id) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.base_version; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(base_version) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.base_updated; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(base_updated) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.fields; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(fields) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.before; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(before) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.state; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(state) ON TABLE public.changeset_items TO smuves_app;
GRANT UPDATE(state) ON TABLE public.changeset_items TO smuves_worker;


--
-- Name: COLUMN changeset_items.reason; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(reason) ON TABLE public.changeset_items TO smuves_app;
GRANT UPDATE(reason) ON TABLE public.changeset_items TO smuves_worker;


--
-- Name: COLUMN changeset_items.warnings; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(warnings) ON TABLE public.changeset_items TO smuves_app;


--
-- Name: COLUMN changeset_items.applied_version; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(applied_version) ON TABLE public.changeset_items TO smuves_worker;


--
-- Name: COLUMN changeset_items.applied_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(applied_at) ON TABLE public.changeset_items TO smuves_worker;


--
-- Name: TABLE changesets; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.changesets TO smuves_app;
GRANT SELECT ON TABLE public.changesets TO smuves_worker;


--
-- Name: COLUMN changesets.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(portal_id) ON TABLE public.changesets TO smuves_app;


--
-- Name: COLUMN changesets.owner_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(owner_id) ON TABLE public.changesets TO smuves_app;


--
-- Name: COLUMN changesets.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(content_type) ON TABLE public.changesets TO smuves_app;


--
-- Name: COLUMN changesets.source; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(source) ON TABLE public.changesets TO smuves_app;


--
-- Name: COLUMN changesets.rolls_back; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(rolls_back) ON TABLE public.changesets TO smuves_app;


--
-- Name: COLUMN changesets.filename; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(filename) ON TABLE public.changesets TO smuves_app;


--
-- Name: TABLE content_history; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.content_history TO smuves_app;


--
-- Name: TABLE content_rejects; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT ON TABLE public.content_rejects TO smuves_worker;


--
-- Name: COLUMN content_rejects.run_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(run_id) ON TABLE public.content_rejects TO smuves_app;


--
-- Name: COLUMN content_rejects.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_type) ON TABLE public.content_rejects TO smuves_app;


--
-- Name: COLUMN content_rejects.reason; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(reason) ON TABLE public.content_rejects TO smuves_app;


--
-- Name: TABLE content_syncs; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT,INSERT,UPDATE ON TABLE public.content_syncs TO smuves_worker;


--
-- Name: COLUMN content_syncs.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.content_syncs TO smuves_app;


--
-- Name: COLUMN content_syncs.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(content_type) ON TABLE public.content_syncs TO smuves_app;


--
-- Name: COLUMN content_syncs.confirmed_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(confirmed_at) ON TABLE public.content_syncs TO smuves_app;


--
-- Name: COLUMN content_syncs.listing_started_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(listing_started_at) ON TABLE public.content_syncs TO smuves_app;


--
-- Name: COLUMN content_syncs.last_full_listing_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(last_full_listing_at) ON TABLE public.content_syncs TO smuves_app;


--
-- Name: TABLE exports; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.exports TO smuves_app;
GRANT SELECT ON TABLE public.exports TO smuves_worker;


--
-- Name: COLUMN exports.run_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(run_id) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(portal_id) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.content_type; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(content_type) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.format; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(format) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.row_count; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(row_count) ON TABLE public.exports TO smuves_worker;


--
-- Name: COLUMN exports.bytes; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(bytes) ON TABLE public.exports TO smuves_worker;


--
-- Name: COLUMN exports.include_deleted; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(include_deleted) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.deleted_count; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(deleted_count) ON TABLE public.exports TO smuves_worker;


--
-- Name: COLUMN exports.edit; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(edit) ON TABLE public.exports TO smuves_app;


--
-- Name: COLUMN exports.fields; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(fields) ON TABLE public.exports TO smuves_app;


--
-- Name: TABLE fetch_reads; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.fetch_reads TO smuves_app;
GRANT SELECT,INSERT,UPDATE ON TABLE public.fetch_reads TO smuves_worker;


--
-- Name: TABLE fetch_seen; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT,INSERT,DELETE ON TABLE public.fetch_seen TO smuves_worker;


--
-- Name: TABLE job_leases; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.job_leases TO smuves_worker;


--
-- Name: TABLE notifications; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT ON TABLE public.notifications TO smuves_app;


--
-- Name: COLUMN notifications.read_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(read_at) ON TABLE public.notifications TO smuves_app;


--
-- Name: COLUMN portal_members.portal_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(portal_id) ON TABLE public.portal_members TO smuves_app;


--
-- Name: COLUMN portal_members.user_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(user_id) ON TABLE public.portal_members TO smuves_app;


--
-- Name: COLUMN portal_members.role; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(role) ON TABLE public.portal_members TO smuves_app;


--
-- Name: TABLE portals; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT DELETE ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(id),INSERT(id) ON TABLE public.portals TO smuves_app;
GRANT SELECT(id) ON TABLE public.portals TO smuves_worker;


--
-- Name: COLUMN portals.name; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(name),INSERT(name),UPDATE(name) ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.owner_id; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(owner_id),INSERT(owner_id) ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.token_encrypted; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(token_encrypted),UPDATE(token_encrypted) ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.time_zone; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT INSERT(time_zone),UPDATE(time_zone) ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.created_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(created_at) ON TABLE public.portals TO smuves_app;


--
-- Name: COLUMN portals.token_rejected_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(token_rejected_at),UPDATE(token_rejected_at) ON TABLE public.portals TO smuves_app;
GRANT SELECT(token_rejected_at) ON TABLE public.portals TO smuves_worker;


--
-- Name: TABLE push_intents; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT,INSERT ON TABLE public.push_intents TO smuves_worker;


--
-- Name: COLUMN push_intents.state; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(state) ON TABLE public.push_intents TO smuves_worker;


--
-- Name: COLUMN push_intents.decided_at; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT UPDATE(decided_at) ON TABLE public.push_intents TO smuves_worker;


--
-- Name: COLUMN schema_migrations.version; Type: ACL; Schema: public; Owner: smuves_owner
--

GRANT SELECT(version) ON TABLE public.schema_migrations TO smuves_app;


--
-- Name: DEFAULT PRIVILEGES FOR FUNCTIONS; Type: DEFAULT ACL; Schema: -; Owner: smuves_owner
--

ALTER DEFAULT PRIVILEGES FOR ROLE smuves_owner REVOKE ALL ON FUNCTIONS  FROM PUBLIC;


--
-- PostgreSQL database dump complete
--


