-- Fleet-scale claims (tests/integration/test_fleet_claims.py): the database's leases, the
-- claim order's columns, running jobs per portal.

-- name: set_job_lease
UPDATE public.job_leases SET lease = %(lease)s WHERE kind = %(kind)s

-- name: fleet_running_of_portal
SELECT count(*) AS n FROM public.jobs WHERE portal_id = %(portal_id)s AND status = 'running'

-- name: fleet_lock_pending_of_portal
-- Lock the portal's pending jobs and let them go (autocommit): each row keeps the finished
-- locker in xmax, which a claim takes for a lock it will skip.
SELECT id FROM public.jobs WHERE portal_id = %(portal_id)s AND status = 'pending' FOR UPDATE
