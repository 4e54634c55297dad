-- Tenancy (DESIGN §7): row-level security, enabled AND forced, on every tenant table.
--
-- smuves_app    sees the portals its user (app.user_id) is a member of, and that user's own
--               notifications. No app.user_id, no rows.
-- smuves_worker sees the rows of the one portal named by app.portal_id. No portal, no rows.
-- smuves_owner  sees everything: FORCE makes policies bind the owner too, and the SECURITY
--               DEFINER functions that do cross-tenant queue work run as the owner.
-- The login role (migrations, operator commands) is a superuser or a member of smuves_owner.

SET LOCAL ROLE smuves_owner;

-- The session's user and portal. An unset setting reads as NULL and matches nothing; a
-- setting made with is_local = true reads as '' after its transaction ends, hence nullif.
CREATE FUNCTION public.current_app_user() RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.user_id', true), '')::uuid $$;

CREATE FUNCTION public.current_app_portal() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(pg_catalog.current_setting('app.portal_id', true), '')::bigint $$;

-- The portals of the session's user. SECURITY DEFINER so that the portal_members policy
-- can use it without recursing into itself.
CREATE FUNCTION public.member_portal_ids() RETURNS SETOF bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
        SELECT m.portal_id FROM public.portal_members AS m
        WHERE m.user_id = public.current_app_user()
    $$;

-- A new portal's owner becomes its first member, so the creator sees what it created.
CREATE FUNCTION public.portals_add_owner_member() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        INSERT INTO public.portal_members (portal_id, user_id, role)
        VALUES (NEW.id, NEW.owner_id, 'owner')
        ON CONFLICT (portal_id, user_id) DO UPDATE SET role = 'owner';
        RETURN NULL;
    END
    $$;
CREATE TRIGGER portals_add_owner_member AFTER INSERT ON public.portals
    FOR EACH ROW EXECUTE FUNCTION public.portals_add_owner_member();

GRANT EXECUTE ON FUNCTION public.current_app_user() TO smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.current_app_portal() TO smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.member_portal_ids() TO smuves_app, smuves_worker;

-- Enable, force, and let the owner (and so the SECURITY DEFINER functions) see every row.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['app_users', 'portals', 'portal_members', 'runs', 'jobs',
                             'content_items', 'exports', 'notifications', 'schedules'] LOOP
        EXECUTE pg_catalog.format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE pg_catalog.format('ALTER TABLE public.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE pg_catalog.format(
            'CREATE POLICY %I ON public.%I TO smuves_owner USING (true) WITH CHECK (true)',
            t || '_owner_all', t);
    END LOOP;
END
$$;

-- app_users: yourself and the people you share a portal with.
CREATE POLICY app_users_app ON public.app_users TO smuves_app
    USING (id = public.current_app_user()
           OR id IN (SELECT m.user_id FROM public.portal_members AS m
                     WHERE m.portal_id IN (SELECT public.member_portal_ids())));
GRANT SELECT ON public.app_users TO smuves_app;

-- portals: the token column is readable by nobody but the owner; workers get it through
-- the fenced portal_token() function while they hold a live lease.
CREATE POLICY portals_app ON public.portals TO smuves_app
    USING (id IN (SELECT public.member_portal_ids()) OR owner_id = public.current_app_user())
    WITH CHECK (owner_id = public.current_app_user()
                OR id IN (SELECT public.member_portal_ids()));
CREATE POLICY portals_worker ON public.portals TO smuves_worker
    USING (id = public.current_app_portal());
GRANT SELECT (id, name, owner_id, created_at) ON public.portals TO smuves_app, smuves_worker;
GRANT INSERT (id, name, owner_id, token_encrypted) ON public.portals TO smuves_app;
GRANT UPDATE (name, token_encrypted) ON public.portals TO smuves_app;

CREATE POLICY portal_members_app ON public.portal_members TO smuves_app
    USING (portal_id IN (SELECT public.member_portal_ids()));
GRANT SELECT ON public.portal_members TO smuves_app;

-- Tables keyed by portal_id share one shape of policy.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['runs', 'jobs', 'content_items', 'exports', 'schedules'] LOOP
        EXECUTE pg_catalog.format(
            'CREATE POLICY %I ON public.%I TO smuves_app'
            ' USING (portal_id IN (SELECT public.member_portal_ids()))'
            ' WITH CHECK (portal_id IN (SELECT public.member_portal_ids()))',
            t || '_app', t);
        EXECUTE pg_catalog.format(
            'CREATE POLICY %I ON public.%I TO smuves_worker'
            ' USING (portal_id = public.current_app_portal())'
            ' WITH CHECK (portal_id = public.current_app_portal())',
            t || '_worker', t);
    END LOOP;
END
$$;
-- The API and the orchestrator create runs and jobs; job state changes after creation
-- (claim, lease, finish) belong to the queue functions.
GRANT SELECT, INSERT, UPDATE ON public.runs, public.jobs TO smuves_app;
GRANT SELECT, INSERT ON public.runs, public.jobs TO smuves_worker;
GRANT SELECT ON public.content_items TO smuves_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON public.content_items TO smuves_worker;
GRANT SELECT, INSERT, UPDATE ON public.exports TO smuves_app, smuves_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON public.schedules TO smuves_app;
GRANT SELECT, UPDATE ON public.schedules TO smuves_worker;

-- notifications: a user reads and marks their own; a worker may tell the users of its
-- portal about a run of that portal.
CREATE POLICY notifications_app ON public.notifications TO smuves_app
    USING (user_id = public.current_app_user());
CREATE POLICY notifications_worker ON public.notifications TO smuves_worker
    USING (run_id IN (SELECT r.id FROM public.runs AS r
                      WHERE r.portal_id = public.current_app_portal()))
    WITH CHECK (run_id IN (SELECT r.id FROM public.runs AS r
                           WHERE r.portal_id = public.current_app_portal()));
GRANT SELECT, UPDATE (read_at) ON public.notifications TO smuves_app;
GRANT SELECT, INSERT ON public.notifications TO smuves_worker;
