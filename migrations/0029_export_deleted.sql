-- Exports leave out the objects marked deleted (content_items.deleted_at: gone from HubSpot)
-- unless asked to keep them. After a portal's churn they can be a fifth of a type's rows, and
-- an export that carried them unmarked passed them off as live content.
--
-- * exports.include_deleted: what was asked, recorded when the export is created, so that
--   the worker that writes the file (whichever claims it) exports just that. The API's role
--   may set it with the other columns it creates an export with.
-- * exports.deleted_count: how many deleted objects the file left out (include_deleted
--   false) or carries (true), written by the worker with the file's rows and bytes; null
--   until then.

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.exports
    ADD COLUMN include_deleted boolean NOT NULL DEFAULT false,
    ADD COLUMN deleted_count bigint
        CONSTRAINT exports_deleted_count_nonnegative CHECK (deleted_count >= 0);

GRANT INSERT (include_deleted) ON public.exports TO smuves_app;
GRANT UPDATE (deleted_count) ON public.exports TO smuves_worker;
