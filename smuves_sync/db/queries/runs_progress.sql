-- Following one run while it is worked (smuves_sync/db/progress.py).

-- name: run_jobs_progress
SELECT * FROM public.jobs WHERE run_id = %(run_id)s ORDER BY id

-- name: run_jobs_claim
-- The queue's one claim (0004), limited to the run: any kind, that run's jobs only.
SELECT * FROM public.claim_jobs(%(worker)s, NULL, %(limit)s, %(fetch_lease)s, %(export_lease)s,
                                %(now)s, p_run_id => %(run_id)s)
