-- Schedules: which are due, claiming and advancing them.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- After a due schedule's firing (or a skipped one): its next time, which must be after now,
-- and, when the firing started a run, the time it fired at. False, and nothing changed, when
-- the schedule is not due (or not enabled, or does not exist).
CREATE OR REPLACE FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
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
REVOKE ALL ON FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.advance_due_schedule(p_schedule_id bigint, p_next_run_at timestamp with time zone, p_last_run_at timestamp with time zone, p_now timestamp with time zone) TO smuves_worker;

-- One due, enabled schedule (next_run_at at or before now), locked FOR UPDATE SKIP LOCKED:
-- the lock lasts until the caller's transaction ends, so however many workers ask at once,
-- each due schedule is handed to exactly one of them; the holder starts the fetch and moves
-- next_run_at on before committing, after which the schedule is no longer due. A schedule
-- whose next_run_at was never computed (NULL) is handed out too, so that the caller can set
-- it. p_skip: ids this caller already tried in this round (one that failed stays due).
CREATE OR REPLACE FUNCTION public.claim_due_schedule(p_skip bigint[] DEFAULT '{}'::bigint[], p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS SETOF public.schedules
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
REVOKE ALL ON FUNCTION public.claim_due_schedule(p_skip bigint[], p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.claim_due_schedule(p_skip bigint[], p_now timestamp with time zone) TO smuves_worker;

-- Disable a due schedule that cannot be fired and tell its owner (its portal's owner when
-- it has none) p_message. NULL when the schedule is not due (nothing changed); else whether
-- somebody was told.
CREATE OR REPLACE FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS boolean
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
REVOKE ALL ON FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.disable_due_schedule(p_schedule_id bigint, p_message text, p_now timestamp with time zone) TO smuves_worker;

-- Whether schedule p_schedule is enabled and due at p_now (the functions below pass
-- effective_now: the database's clock, or a made-up time from the operator's login only).
-- Not SECURITY DEFINER, granted to nobody: they run it as the owner.
CREATE OR REPLACE FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
        SELECT p_schedule.enabled
           AND (p_schedule.next_run_at IS NULL OR p_schedule.next_run_at <= p_now)
    $$;
REVOKE ALL ON FUNCTION public.schedule_is_due(p_schedule public.schedules, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
