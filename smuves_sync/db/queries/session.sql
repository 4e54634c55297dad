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

-- name: session_ping
SELECT 1
