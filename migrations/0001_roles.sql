-- Roles and the owner of every object.
--
-- smuves_owner   NOLOGIN; owns every table, type and function (later files start with
--                SET LOCAL ROLE smuves_owner so whatever they create belongs to it).
-- smuves_app     the HTTP API; each transaction names its user with
--                set_config('app.user_id', <uuid>, true) and sees only that user's portals.
-- smuves_worker  queue workers; each transaction that touches tenant rows names its portal
--                with set_config('app.portal_id', <id>, true); queue state changes go through
--                the SECURITY DEFINER functions of a later migration.
--
-- Roles are cluster-wide: another database on the same server (a second install, a test
-- clone) may have created them already, possibly at this very moment.

DO $$
DECLARE
    wanted text;
BEGIN
    FOREACH wanted IN ARRAY ARRAY['smuves_owner', 'smuves_app', 'smuves_worker'] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = wanted) THEN
            BEGIN
                EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', wanted);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;  -- a concurrent migrator of another database made it first
            END;
        END IF;
        -- The login role that migrates must be able to SET ROLE to each of them: to create
        -- objects as the owner, and to open worker/app sessions. Superusers already can.
        IF NOT pg_catalog.pg_has_role(current_user, wanted, 'MEMBER') THEN
            EXECUTE pg_catalog.format('GRANT %I TO %I', wanted, current_user);
        END IF;
    END LOOP;
END
$$;

-- PostgreSQL before 15 let every role create objects in public; nobody but the owner should.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT CREATE ON SCHEMA public TO smuves_owner;

-- Every role may execute a new function unless that is revoked. Revoke it here, once, for
-- every function smuves_owner creates in this database: the migrations that follow grant
-- EXECUTE to the roles that need it and nothing else (the SECURITY DEFINER functions, which
-- run with the owner's rights, above all).
ALTER DEFAULT PRIVILEGES FOR ROLE smuves_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

-- The migration runner created its ledger before the owner role existed.
ALTER TABLE public.schema_migrations OWNER TO smuves_owner;
