-- tests/integration/test_queue_commit.py: how the queue's calls commit.

-- name: commit_setting
-- What the transaction's COMMIT will do: 'off', not wait for the WAL flush.
SELECT pg_catalog.current_setting('synchronous_commit') AS synchronous_commit

-- name: jit_available
-- Whether this server can compile plans with JIT at all (llvmjit installed and jit on).
SELECT pg_catalog.pg_jit_available() AS available

-- name: auto_explain_loaded
-- auto_explain in this session (a superuser's).
LOAD 'auto_explain'

-- name: plans_told_as_notices
-- Every plan of this session, nested statements included, sent to the client as a NOTICE,
-- and JIT for any plan whatever its cost (without the costly inlining and optimisation).
SELECT pg_catalog.set_config('auto_explain.log_min_duration', '0', false),
       pg_catalog.set_config('auto_explain.log_nested_statements', 'on', false),
       pg_catalog.set_config('auto_explain.log_level', 'notice', false),
       pg_catalog.set_config('jit_above_cost', '0', false),
       pg_catalog.set_config('jit_inline_above_cost', '-1', false),
       pg_catalog.set_config('jit_optimize_above_cost', '-1', false)

-- name: jobs_counted
SELECT count(*) AS jobs FROM public.jobs

-- name: claim_two
SELECT j.id, j.lease_token FROM public.claim_jobs('w1', ARRAY['fetch'], 2, %(now)s) AS j

-- name: complete_claimed
SELECT j.id FROM public.complete_jobs(%(ids)s, %(tokens)s, NULL, %(now)s) AS j
