-- Storage settings for the queue's tables. Every job row is rewritten two or three times
-- within minutes of being created (claim, complete, sometimes heartbeats and retries), and
-- each rewrite leaves a dead row version and dead index entries behind: vacuum and analyze
-- the queue tables far more often than the defaults would, so that dead entries do not pile
-- up in front of the claims and the planner knows how many jobs are pending and running.

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.jobs SET (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);
ALTER TABLE public.runs SET (
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.05
);
