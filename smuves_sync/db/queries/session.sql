-- Per-connection and per-transaction session settings (smuves_sync/db/pool.py, database.py).

-- name: session_set_role
-- Same effect as SET ROLE, with the role name as a bound value.
SELECT pg_catalog.set_config('role', %(role)s, false)

-- name: session_set_user
-- For smuves_app: the user whose portals this transaction may see.
SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true)

-- name: session_set_portal
-- For smuves_worker: the one portal whose rows this transaction may see.
SELECT pg_catalog.set_config('app.portal_id', %(portal_id)s::text, true)

-- name: session_set_job
-- For smuves_worker: a transaction of a claimed job, which sees the job's portal and, while
-- the job runs under this lease, writes it (`Database.for_job`; worker_holds_lease and the
-- lease policies in migrations/functions/security.sql).
SELECT pg_catalog.set_config('app.portal_id', %(portal_id)s::text, true),
       pg_catalog.set_config('app.job_id', %(job_id)s::text, true),
       pg_catalog.set_config('app.lease_token', %(lease_token)s::text, true)

-- name: session_set_job_async_commit
-- session_set_job for a fetched page's transaction (`Database.for_job(..., async_commit=
-- True)`): its COMMIT does not wait for the WAL to reach disk. A crash of Postgres can lose
-- the last such pages, each whole with the checkpoint it carries, so the job resumes before
-- them and reads them again; any later synchronous commit flushes them (a fetch's completion
-- does not wait either: db/jobs.py, UNFLUSHED_COMPLETIONS).
SELECT pg_catalog.set_config('app.portal_id', %(portal_id)s::text, true),
       pg_catalog.set_config('app.job_id', %(job_id)s::text, true),
       pg_catalog.set_config('app.lease_token', %(lease_token)s::text, true),
       pg_catalog.set_config('synchronous_commit', 'off', true)

-- name: session_custom_plans
-- For `Database.custom_plans`. A prepared statement (psycopg prepares a query it has run five
-- times on a connection) may switch to a generic plan, which cannot drop an `IS NULL OR`
-- branch nor prove a partial index's predicate from a parameter: plan every statement of
-- this transaction afresh.
SET LOCAL plan_cache_mode = force_custom_plan

-- name: session_ping
SELECT 1

-- name: session_login
-- Who this connection logged in as, and whether that login has more than the given role's
-- rights.
-- pg_has_role is not asked about smuves_owner on a database that has no such role.
SELECT session_user AS login, r.rolsuper AS superuser, r.rolbypassrls AS bypassrls,
       CASE WHEN pg_catalog.to_regrole('smuves_owner') IS NULL THEN false
            ELSE pg_catalog.pg_has_role(session_user, 'smuves_owner', 'USAGE') END AS owner,
       pg_catalog.pg_has_role(session_user, %(role)s, 'USAGE') AS member
FROM pg_catalog.pg_roles AS r
WHERE r.rolname = session_user
