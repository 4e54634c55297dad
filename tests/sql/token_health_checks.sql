-- Checks of a refused token's mark and of key rotation's verification
-- (tests/integration/test_refused_token.py, api/test_refused_token.py, test_rotate_key.py).

-- name: token_rejected_at
SELECT token_rejected_at FROM public.portals WHERE id = %(portal_id)s

-- name: token_runs_of_portal
SELECT id, status::text AS status FROM public.runs WHERE portal_id = %(portal_id)s ORDER BY id

-- name: token_lock_portal
-- Holds the portal's row until the transaction ends: a rotation's batch waits for it.
SELECT id FROM public.portals WHERE id = %(portal_id)s FOR UPDATE

-- name: token_rotation_waits
-- A backend of this database waiting for a row lock taken by a rotation's batch.
SELECT count(*) AS waiting FROM pg_catalog.pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock'
  AND query LIKE '%%FOR UPDATE%%' AND query LIKE '%%token_encrypted%%'

-- name: rotate_store_token
-- A reconnect as a process with some key stored it: a new ciphertext, nothing else.
UPDATE public.portals SET token_encrypted = %(token_encrypted)s WHERE id = %(portal_id)s

-- name: token_jobs_due_now
-- The run's parked jobs due now, as if their wait were over.
UPDATE public.jobs SET run_after = now(), fair_at = NULL
WHERE run_id = %(run_id)s AND status = 'pending'

-- name: token_jobs_of_run
SELECT id, status::text AS status, attempts, run_after, last_error, last_error_public
FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id
