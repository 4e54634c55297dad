-- Finishing a job no longer fires a trigger per row, nor settling a run one per update of runs:
-- a settled run's notice is written by settle_locked_runs itself (notify_settled_runs), and a
-- finished fetch job's sightings are forgotten once per statement
-- (jobs_fetch_seen_forget_finished), both in functions/runs.sql and functions/queue.sql. The
-- triggers and functions they replace are dropped here.
DROP TRIGGER IF EXISTS runs_notify_settled ON public.runs;
DROP FUNCTION IF EXISTS public.runs_notify_settled();
DROP TRIGGER IF EXISTS jobs_fetch_seen_forget ON public.jobs;
DROP FUNCTION IF EXISTS public.fetch_seen_forget_job();
