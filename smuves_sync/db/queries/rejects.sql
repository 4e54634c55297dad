-- content_rejects (smuves_sync/db/rejects.py): the objects a fetch could not store, recorded
-- in the page's transaction, and what a run's readers are told about them.

-- name: content_rejects_add
-- One page's rejects as parallel arrays. An object already recorded by the run (its page read
-- again by a second pass or after a requeue from the start) is not recorded twice: by its id,
-- or without one by its bytes (the unique indexes content_rejects_once_per_run and
-- content_rejects_once_per_run_without_id).
INSERT INTO public.content_rejects
    (portal_id, run_id, content_type, hubspot_id, reason, raw, raw_size)
SELECT %(portal_id)s, %(run_id)s, %(content_type)s::text, r.hubspot_id, r.reason, r.raw,
       r.raw_size
FROM unnest(%(hubspot_ids)s::text[], %(reasons)s::text[], %(raws)s::bytea[],
            %(raw_sizes)s::integer[]) AS r (hubspot_id, reason, raw, raw_size)
ON CONFLICT DO NOTHING

-- name: run_rejects
-- Per content type: how many objects of the run could not be stored, the commonest reason
-- and how many different reasons there were.
SELECT content_type::text AS content_type, count(*) AS objects,
       mode() WITHIN GROUP (ORDER BY reason) AS reason, count(DISTINCT reason) AS reasons
FROM public.content_rejects
WHERE run_id = %(run_id)s
GROUP BY content_type
ORDER BY content_type

-- name: run_rejects_note
-- "N objects could not be stored: …" (run_rejects_note), or NULL.
SELECT public.run_rejects_note(%(run_id)s) AS note
