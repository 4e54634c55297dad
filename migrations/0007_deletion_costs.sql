-- How a fetch job found what HubSpot no longer holds, and what each way cost in requests
-- (fetch_reads): the archived pass of an incremental read (what left the live listing for the
-- archived one), count windows (HubSpot's counts over creation-time windows, then the ids of the
-- windows whose counts differ: purged objects), and full reads (every id of a pass listed and
-- swept, or a full read of the type: all its requests).
ALTER TABLE public.fetch_reads
    ADD COLUMN archived_pass_requests bigint DEFAULT 0 NOT NULL,
    ADD COLUMN count_window_requests bigint DEFAULT 0 NOT NULL,
    ADD COLUMN full_read_requests bigint DEFAULT 0 NOT NULL,
    ADD CONSTRAINT fetch_reads_deletion_costs_nonnegative CHECK (
        archived_pass_requests >= 0 AND count_window_requests >= 0 AND full_read_requests >= 0
    );
