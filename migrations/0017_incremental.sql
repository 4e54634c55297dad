-- Incremental fetches: a fetch of a type that has a completed fetch reads only what changed
-- since that fetch's listing began (workers/fetch.py, workers/reads.py).
--
-- * content_syncs says, per portal and type, when the listing of its last completed fetch
--   began and in which mode it read (full or incremental), and when the last full and the
--   last incremental listing began: the next fetch reads what changed after the first of
--   these (less an overlap for clock skew), and reads in full when the last full read is
--   older than SMUVES_FULL_SYNC_EVERY.
-- * runs.full_read: the run was asked to read every type in full (`smuves sync --full`, the
--   API's `"full": true`).
-- * fetch_reads: how each fetch job reads its type (mode, why, from when) and what it cost
--   (requests made; objects changed, deleted, unchanged): the run summary and the API's run
--   view show it per type.

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.content_syncs
    ADD COLUMN mode text NOT NULL DEFAULT 'full'
        CONSTRAINT content_syncs_mode_known CHECK (mode IN ('full', 'incremental')),
    -- NULL for a row written before this migration: the next fetch of it reads in full
    ADD COLUMN listing_started_at timestamptz,
    ADD COLUMN last_full_listing_at timestamptz,
    ADD COLUMN last_incremental_listing_at timestamptz;

ALTER TABLE public.runs ADD COLUMN full_read boolean NOT NULL DEFAULT false;
-- A worker login creates runs only for due schedules (0015), which read as the schedule says:
-- it may name the column (the orchestrator's INSERT always does) but ask for a full read only
-- in the operator's session (`smuves sync --full`).
GRANT INSERT (full_read) ON public.runs TO smuves_worker;
CREATE POLICY runs_worker_full_read ON public.runs AS RESTRICTIVE FOR INSERT
    TO smuves_worker
    WITH CHECK (NOT full_read OR public.operator_session());

CREATE TABLE public.fetch_reads (
    job_id              bigint PRIMARY KEY REFERENCES public.jobs (id) ON DELETE CASCADE,
    run_id              bigint NOT NULL,
    portal_id           bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    content_type        public.content_type NOT NULL,
    mode                text NOT NULL
                        CONSTRAINT fetch_reads_mode_known CHECK (mode IN ('full', 'incremental')),
    -- why this mode: a person can read it ("first fetch", "asked for", "no change filters", …)
    reason              text NOT NULL,
    -- an incremental read asks for what changed after this moment (HubSpot's clock)
    since               timestamptz,
    -- the database's clock when the listing began (from the start: a resumed job keeps it)
    listing_started_at  timestamptz NOT NULL,
    requests            bigint NOT NULL DEFAULT 0 CONSTRAINT fetch_reads_requests_nonnegative CHECK (requests >= 0),
    changed             bigint NOT NULL DEFAULT 0 CONSTRAINT fetch_reads_changed_nonnegative CHECK (changed >= 0),
    deleted             bigint NOT NULL DEFAULT 0 CONSTRAINT fetch_reads_deleted_nonnegative CHECK (deleted >= 0),
    unchanged           bigint NOT NULL DEFAULT 0 CONSTRAINT fetch_reads_unchanged_nonnegative CHECK (unchanged >= 0)
);
CREATE INDEX fetch_reads_run_idx ON public.fetch_reads (run_id);

-- Row-level security as on content_syncs (0006): the app role reads its portals' rows; a
-- worker reads and writes its one portal's.
ALTER TABLE public.fetch_reads ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.fetch_reads FORCE ROW LEVEL SECURITY;
CREATE POLICY fetch_reads_owner_all ON public.fetch_reads TO smuves_owner
    USING (true) WITH CHECK (true);
CREATE POLICY fetch_reads_app ON public.fetch_reads TO smuves_app
    USING (portal_id IN (SELECT public.member_portal_ids()));
CREATE POLICY fetch_reads_worker ON public.fetch_reads TO smuves_worker
    USING (portal_id = public.current_app_portal())
    WITH CHECK (portal_id = public.current_app_portal());
GRANT SELECT ON public.fetch_reads TO smuves_app;
GRANT SELECT, INSERT, UPDATE ON public.fetch_reads TO smuves_worker;
