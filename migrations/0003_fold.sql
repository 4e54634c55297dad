-- The functions whose names or signatures the fold of the migration history changed. A
-- database migrated before the fold still has them under their old names; the function files
-- make them again under the seeds' names (claim_next_job, claim_jobs, complete_jobs,
-- enqueue_job) and prune_runs. On a new database there is nothing to drop.
--
-- The runner's ledger of function files, made by the runner as the login that migrates,
-- belongs to the owner like schema_migrations.

SET LOCAL ROLE smuves_owner;

DROP FUNCTION IF EXISTS public.claim_next_job_v2(text, text[], timestamp with time zone, integer);
DROP FUNCTION IF EXISTS public.claim_jobs_v2(text, text[], integer, timestamp with time zone, bigint, integer, bigint[]);
-- complete_jobs with four arguments only called complete_jobs_v2; the five-argument
-- complete_jobs (p_settle) takes both its name and its calls.
DROP FUNCTION IF EXISTS public.complete_jobs(bigint[], uuid[], bigint[], timestamp with time zone);
DROP FUNCTION IF EXISTS public.complete_jobs_v2(bigint[], uuid[], bigint[], timestamp with time zone, boolean);
DROP FUNCTION IF EXISTS public.enqueue_job_v2(bigint, text, smallint, integer, timestamp with time zone, bigint, text, bigint);
DROP FUNCTION IF EXISTS public.prune_history(interval, boolean, timestamp with time zone);

RESET ROLE;
ALTER TABLE public.schema_functions OWNER TO smuves_owner;
