-- Following one run while it is worked (smuves_sync/db/progress.py).

-- name: run_jobs_progress
SELECT * FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: run_jobs_claim
SELECT * FROM public.claim_run_jobs(%(worker)s, %(run_id)s, %(limit)s,
                                    %(fetch_lease)s, %(export_lease)s, %(now)s)
