-- Totals counted when a fetch starts (orchestrator.count_totals). Counting asks HubSpot, so
-- the orchestrator needs the portal's token before any job of the fetch exists, outside the
-- lease rule of portal_token() (0004). It gets the token only while it acts for someone who
-- may start a fetch of that portal:
--
-- portal_token_for_member    SECURITY DEFINER, for smuves_app (the API): the token of a
--                            portal the user in app.user_id may see, as a member or its owner
--                            (the rule of the portals_app policy, 0003). No row for any other
--                            portal, nor when no user is named.
-- portal_token_for_operator  SECURITY DEFINER, granted to nobody: only its owner's members
--                            (the login role that operator commands such as `smuves sync` run
--                            as; see 0003) and superusers may execute it. A dedicated operator
--                            role would be given EXECUTE in the grants at the end.
--
-- smuves_worker gets neither: a worker reads a token only while it holds a live lease on one
-- of the portal's jobs (portal_token), so a fetch a schedule starts is counted by its jobs.
-- Same conventions as 0004 and 0008: owned by smuves_owner, search_path pinned, every table
-- qualified; EXECUTE is revoked from PUBLIC by 0001's default privileges.

SET LOCAL ROLE smuves_owner;

CREATE FUNCTION public.portal_token_for_member(p_portal_id bigint)
    RETURNS TABLE (portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        -- The definer sees every row: the caller's membership is checked here.
        SELECT p.id, p.token_encrypted
        FROM public.portals AS p
        WHERE p.id = p_portal_id
          AND (p.id IN (SELECT public.member_portal_ids())
               OR p.owner_id = public.current_app_user())
    $$;

CREATE FUNCTION public.portal_token_for_operator(p_portal_id bigint)
    RETURNS TABLE (portal_id bigint, token_encrypted bytea)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT p.id, p.token_encrypted FROM public.portals AS p WHERE p.id = p_portal_id
    $$;

GRANT EXECUTE ON FUNCTION public.portal_token_for_member(bigint) TO smuves_app;
-- public.portal_token_for_operator(bigint): no grant (see above).
