-- What a worker may not choose, and what a run counts once:
-- * content_rejects: an object without a usable id is recorded once per run too. 0012 could
--   not tell such objects apart and recorded one again each time its page was read (a second
--   pass of the listing, a requeue from the start), so "N objects could not be stored" counted
--   it twice. Its bytes tell it apart: the same type, size and bytes in one run are the same
--   object (two objects HubSpot sent byte for byte alike are counted once).

SET LOCAL ROLE smuves_owner;

DELETE FROM public.content_rejects AS r
USING public.content_rejects AS earlier
WHERE r.hubspot_id IS NULL AND earlier.hubspot_id IS NULL
  AND earlier.run_id = r.run_id AND earlier.content_type = r.content_type
  AND earlier.raw_size = r.raw_size AND earlier.raw = r.raw
  AND earlier.id < r.id;

CREATE UNIQUE INDEX content_rejects_once_per_run_without_id ON public.content_rejects
    (run_id, content_type, raw_size, pg_catalog.md5(raw)) WHERE hubspot_id IS NULL;
