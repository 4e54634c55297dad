-- What the tests of the database error boundary provoke.

-- name: errors_backend_pid
SELECT pg_catalog.pg_backend_pid() AS pid

-- name: errors_terminate_backend
-- The session dies as in a database restart or a network cut.
SELECT pg_catalog.pg_terminate_backend(%(pid)s) AS terminated

-- name: errors_sleep
SELECT pg_catalog.pg_sleep(%(seconds)s)

-- name: errors_divide_by_zero
SELECT 1 / 0 AS never

-- name: errors_lease_of_job
SELECT lease_token FROM public.jobs WHERE id = %(job_id)s

-- name: errors_missing_function
SELECT public.smuves_no_such_function() AS never
