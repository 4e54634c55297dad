-- Roles and the owner of every object.
--
-- smuves_owner   NOLOGIN; owns every table, type and function (later files start with
--                SET LOCAL ROLE smuves_owner so whatever they create belongs to it).
-- smuves_app     the HTTP API; each transaction names its user with
--                set_config('app.user_id', <uuid>, true) and sees only that user's portals.
-- smuves_worker  queue workers; each transaction that touches tenant rows names its portal
--                with set_config('app.portal_id', <id>, true); queue state changes go through
--                the SECURITY DEFINER functions of migrations/functions/queue.sql.
--
-- Those three are NOLOGIN: nobody connects as them. The API and the workers connect as
-- their own LOGIN roles, each a member of one of them and of nothing else:
--
-- smuves_api_login     member of smuves_app    (SMUVES_API_DATABASE_URL)
-- smuves_worker_login  member of smuves_worker (SMUVES_WORKER_DATABASE_URL)
--
-- Neither is a superuser, may create roles or databases, replicate or bypass row-level
-- security, and neither may SET ROLE to anything with more rights than its own: a RESET ROLE
-- (or a SET ROLE to the owner) from a runtime connection gains nothing. They get no password
-- here; `smuves db migrate` sets one from the runtime URLs when they carry one, and the
-- embedded server trusts its own socket.
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

-- The runtime logins. An existing role of that name is taken as ours only if it is as harmless
-- as one made here: anything more (superuser, another membership, ...) stops the migration,
-- since the API or the workers would run with those rights.
DO $$
DECLARE
    wanted record;
BEGIN
    FOR wanted IN SELECT * FROM (VALUES ('smuves_api_login', 'smuves_app'),
                                        ('smuves_worker_login', 'smuves_worker')) AS v (login, grp)
    LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = wanted.login) THEN
            BEGIN
                EXECUTE pg_catalog.format(
                    'CREATE ROLE %I LOGIN INHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE '
                    'NOREPLICATION NOBYPASSRLS', wanted.login);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;  -- a concurrent migrator of another database made it first
            END;
        END IF;
        IF NOT pg_catalog.pg_has_role(wanted.login, wanted.grp, 'USAGE') THEN
            BEGIN
                EXECUTE pg_catalog.format('GRANT %I TO %I', wanted.grp, wanted.login);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;  -- granted by a concurrent migrator
            END;
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_roles AS r
                   WHERE r.rolname = wanted.login
                     AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication
                          OR r.rolbypassrls OR NOT r.rolcanlogin OR NOT r.rolinherit))
           OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m
                      JOIN pg_catalog.pg_roles AS g ON g.oid = m.roleid
                      JOIN pg_catalog.pg_roles AS r ON r.oid = m.member
                      WHERE r.rolname = wanted.login AND g.rolname <> wanted.grp) THEN
            RAISE EXCEPTION 'role % exists with more rights than a runtime login may have '
                            '(it must be LOGIN, INHERIT, no superuser, createrole, createdb, '
                            'replication or bypassrls, and a member of % only)',
                            wanted.login, wanted.grp
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        -- The same goes for the role whose rights the login inherits.
        IF EXISTS (SELECT FROM pg_catalog.pg_roles AS r
                   WHERE r.rolname = wanted.grp
                     AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication
                          OR r.rolbypassrls))
           OR EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m
                      JOIN pg_catalog.pg_roles AS r ON r.oid = m.member
                      WHERE r.rolname = wanted.grp) THEN
            RAISE EXCEPTION 'role % has rights beyond its grants (superuser, createrole, '
                            'createdb, replication, bypassrls, or membership of another role)',
                            wanted.grp
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END LOOP;
END
$$;

-- PostgreSQL before 15 let every role create objects in public; nobody but the owner should.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT CREATE ON SCHEMA public TO smuves_owner;

-- Every role may execute a new function unless that is revoked. Revoke it here, once, for
-- every function smuves_owner creates in this database: the function files grant
-- EXECUTE to the roles that need it and nothing else (the SECURITY DEFINER functions, which
-- run with the owner's rights, above all).
ALTER DEFAULT PRIVILEGES FOR ROLE smuves_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

-- The migration runner created its ledger before the owner role existed.
ALTER TABLE public.schema_migrations OWNER TO smuves_owner;

-- Roles are the whole server's: without this every login of the server may connect here,
-- another install's runtime logins among them. The migration runner grants CONNECT to this
-- install's own logins (`SMUVES_ROLE_PREFIX`) once the migrations are applied. Run as the
-- migrating login, which owns the database or is a superuser; any other keeps its way in.
DO $$
DECLARE
    v_database text := pg_catalog.current_database();
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user
                                                           AND r.rolsuper)
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_database AS d
                       WHERE d.datname = v_database
                         AND pg_catalog.pg_has_role(current_user, d.datdba, 'MEMBER')) THEN
        EXECUTE pg_catalog.format('GRANT CONNECT ON DATABASE %I TO %I', v_database,
                                  current_user);
    END IF;
    EXECUTE pg_catalog.format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', v_database);
END
$$;
