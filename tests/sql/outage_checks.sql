-- Checks of tests/integration/test_hubspot_outage.py.

-- name: outage_fetch_reads_of_run
SELECT job_id, content_type::text AS content_type, requests
FROM public.fetch_reads WHERE run_id = %(run_id)s ORDER BY job_id

-- name: outage_public_errors_of_portal
SELECT id, last_error_public FROM public.jobs WHERE portal_id = %(portal_id)s ORDER BY id
