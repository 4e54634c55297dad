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

-- name: migrations_applied
SELECT version, name, checksum FROM public.schema_migrations ORDER BY version

-- name: migrations_record
INSERT INTO public.schema_migrations (version, name, checksum)
VALUES (%(version)s, %(name)s, %(checksum)s)

-- name: migrations_login_password
-- {login} is an identifier, {password} a literal: the verifier libpq computed (never the
-- password itself, which would reach the server's statement log).
ALTER ROLE {login} PASSWORD {password}
