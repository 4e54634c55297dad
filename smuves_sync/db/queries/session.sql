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

-- name: session_custom_plans
-- For `Database.custom_plans`. A prepared statement (psycopg prepares a query it has run five
-- times on a connection) may switch to a generic plan, which cannot drop an `IS NULL OR`
-- branch nor prove a partial index's predicate from a parameter: plan every statement of
-- this transaction afresh.
SET LOCAL plan_cache_mode = force_custom_plan

-- name: session_ping
SELECT 1
