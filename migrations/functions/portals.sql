-- Portals: membership, tokens, transfer, deleting their content, the HubSpot minutes they
-- spend.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- Mark portal p_portal_id's token as refused, for the operator's login or a member of the
-- portal (the rule of portal_token_for_member). True when the caller may, whether or not it
-- was marked already.
CREATE OR REPLACE FUNCTION public.mark_portal_token_refused(p_portal_id bigint) RETURNS boolean
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
REVOKE ALL ON FUNCTION public.mark_portal_token_refused(p_portal_id bigint) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.mark_portal_token_refused(p_portal_id bigint) TO smuves_app;

CREATE OR REPLACE FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) RETURNS TABLE(portal_id bigint, token_encrypted bytea, time_zone text, token_rejected_at timestamp with time zone)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT p.id, p.token_encrypted, p.time_zone, p.token_rejected_at
        FROM public.jobs AS j JOIN public.portals AS p ON p.id = j.portal_id
        WHERE j.id = p_job_id AND j.lease_token = p_lease_token AND j.status = 'running'
    $$;
REVOKE ALL ON FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.portal_token(p_job_id bigint, p_lease_token uuid) TO smuves_worker;

CREATE OR REPLACE FUNCTION public.portal_token_for_member(p_portal_id bigint) RETURNS TABLE(portal_id bigint, token_encrypted bytea)
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
REVOKE ALL ON FUNCTION public.portal_token_for_member(p_portal_id bigint) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.portal_token_for_member(p_portal_id bigint) TO smuves_app;

CREATE OR REPLACE FUNCTION public.portal_token_for_operator(p_portal_id bigint) RETURNS TABLE(portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
        SELECT p.id, p.token_encrypted FROM public.portals AS p WHERE p.id = p_portal_id
    $$;
REVOKE ALL ON FUNCTION public.portal_token_for_operator(p_portal_id bigint) FROM PUBLIC, smuves_app, smuves_worker;

-- A new portal's owner becomes its first member, so the creator sees what it created.
CREATE OR REPLACE FUNCTION public.portals_add_owner_member() RETURNS trigger
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
REVOKE ALL ON FUNCTION public.portals_add_owner_member() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER portals_add_owner_member AFTER INSERT ON public.portals FOR EACH ROW EXECUTE FUNCTION public.portals_add_owner_member();

-- What ON DELETE CASCADE did for the two tables. content_history_removed skips the
-- rows of a portal that is gone: its history goes with it, here.
CREATE OR REPLACE FUNCTION public.portals_delete_content() RETURNS trigger
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
REVOKE ALL ON FUNCTION public.portals_delete_content() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER portals_delete_content AFTER DELETE ON public.portals REFERENCING OLD TABLE AS old_portals FOR EACH STATEMENT EXECUTE FUNCTION public.portals_delete_content();

CREATE OR REPLACE FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
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
REVOKE ALL ON FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.record_hubspot_minute(p_requests bigint, p_rate_limited bigint, p_now timestamp with time zone) TO smuves_worker;

-- Give portal p_portal_id to p_owner_id as its owner and only member (`smuves portal add
-- --transfer-to`): everyone else who had it (members, the previous owner) loses it, with what
-- they were told about its runs; its runs and schedules they started become nobody's, so
-- what those runs end with goes to the new owner. Returns the emails of those who lost it;
-- no row for a portal that does not exist, or that already was the new owner's alone.
CREATE OR REPLACE FUNCTION public.transfer_portal(p_portal_id bigint, p_owner_id uuid) RETURNS TABLE(email text)
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
REVOKE ALL ON FUNCTION public.transfer_portal(p_portal_id bigint, p_owner_id uuid) FROM PUBLIC, smuves_app, smuves_worker;
