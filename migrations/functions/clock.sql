-- The clock every queue function reads: an injected instant or now().
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- The time a queue function acts at: the database's clock, or p_now when the session may act
-- as the owner (tests pass a time instead of sleeping). A runtime login that passes a time is
-- refused: a claim "in the future" would expire every lease and hand its caller other
-- workers' jobs, with their portals' tokens. No SET clause: it runs inside the queue's hot
-- functions, whose own search_path is pinned.
CREATE OR REPLACE FUNCTION public.effective_now(p_now timestamp with time zone) RETURNS timestamp with time zone
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
REVOKE ALL ON FUNCTION public.effective_now(p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
