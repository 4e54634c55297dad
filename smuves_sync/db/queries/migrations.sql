-- Statements of the migration runner (smuves_sync/db/migrations.py).

-- name: migrations_lock
-- Held for the whole run on the runner's own connection: a second migrator waits, then
-- finds everything applied.
SELECT pg_catalog.pg_advisory_lock(%(key)s)

-- name: migrations_unlock
SELECT pg_catalog.pg_advisory_unlock(%(key)s)

-- name: migrations_ensure_ledger
CREATE TABLE IF NOT EXISTS public.schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)

-- name: migrations_ensure_functions_ledger
-- The checksum of each file of migrations/functions/ as last applied.
CREATE TABLE IF NOT EXISTS public.schema_functions (
    file        text PRIMARY KEY,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)

-- name: migrations_functions_applied
SELECT file, checksum FROM public.schema_functions ORDER BY file

-- name: migrations_functions_begin
-- A SQL function's body is checked when it is made; one may call a function of a later file.
SET LOCAL check_function_bodies = off

-- name: migrations_functions_reset_role
RESET ROLE

-- name: migrations_functions_record
INSERT INTO public.schema_functions AS f (file, checksum)
VALUES (%(file)s, %(checksum)s)
ON CONFLICT (file) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()

-- name: migrations_forget_folded
-- The history the fold replaced (smuves_sync/db/folded.py), recorded as its baseline instead.
DELETE FROM public.schema_migrations

-- name: migrations_applied
SELECT version, name, checksum FROM public.schema_migrations ORDER BY version

-- name: migrations_record
INSERT INTO public.schema_migrations (version, name, checksum)
VALUES (%(version)s, %(name)s, %(checksum)s)

-- name: migrations_login_password
-- {login} is an identifier, {password} a literal: the verifier libpq computed (never the
-- password itself, which would reach the server's statement log).
ALTER ROLE {login} PASSWORD {password}

-- name: migrations_login_state
-- A runtime login of this install (`ensure_logins`): whether it exists, and whether it is as
-- harmless as one the runner makes: LOGIN, INHERIT, no superuser, createrole, createdb,
-- replication or bypassrls, and a member of %(group)s only. NULL columns: no such role.
SELECT r.rolname IS NOT NULL AS found,
       NOT (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication
            OR r.rolbypassrls OR NOT r.rolcanlogin OR NOT r.rolinherit)
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_auth_members AS m
                       JOIN pg_catalog.pg_roles AS g ON g.oid = m.roleid
                       WHERE m.member = r.oid AND g.rolname <> %(group)s) AS harmless,
       pg_catalog.pg_has_role(r.oid, %(group)s, 'USAGE') AS member
FROM (SELECT %(login)s::name AS wanted) AS w
LEFT JOIN pg_catalog.pg_roles AS r ON r.rolname = w.wanted

-- name: migrations_group_exists
SELECT pg_catalog.to_regrole(%(group)s) IS NOT NULL AS found

-- name: migrations_login_create
-- {login} is an identifier (of a validated role prefix).
CREATE ROLE {login} LOGIN INHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS

-- name: migrations_login_join
GRANT {group} TO {login}

-- name: migrations_database
SELECT pg_catalog.current_database() AS name

-- name: migrations_login_connect
-- This database only: another install's database does not let this login in.
GRANT CONNECT ON DATABASE {database} TO {login}
