-- content_items: one page of a fetch upserted in one statement, deletions after a complete
-- fetch, and the streaming read of exports (smuves_sync/db/content.py).

-- name: content_upsert_page
-- %(rows)s is one JSON array of objects (promoted fields + `data`). content_hash is the md5 of
-- the canonical jsonb text: an unchanged object keeps its stored document (no new TOAST
-- value is written), yet every object is stamped with the run that saw it, which the
-- deletion pass relies on. An object seen again is live again.
INSERT INTO public.content_items AS c
    (portal_id, content_type, hubspot_id, name, slug, url, state, language,
     hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
     last_seen_run, synced_at)
SELECT %(portal_id)s, %(content_type)s, r.hubspot_id, r.name, r.slug, r.url, r.state,
       r.language, r.hubspot_updated_at, r.archived, NULL, r.data, md5(r.data::text),
       %(run_id)s, %(run_id)s, now()
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r (
    hubspot_id text, name text, slug text, url text, state text, language text,
    hubspot_updated_at timestamptz, archived boolean, data jsonb)
ON CONFLICT (portal_id, content_type, hubspot_id) DO UPDATE
SET name = excluded.name,
    slug = excluded.slug,
    url = excluded.url,
    state = excluded.state,
    language = excluded.language,
    hubspot_updated_at = excluded.hubspot_updated_at,
    archived = excluded.archived,
    deleted_at = NULL,
    data = CASE WHEN c.content_hash = excluded.content_hash THEN c.data ELSE excluded.data END,
    content_hash = excluded.content_hash,
    last_seen_run = excluded.last_seen_run,
    synced_at = excluded.synced_at

-- name: content_mark_unseen_deleted
-- After a complete fetch by run %(run_id)s: what it did not see is gone from HubSpot.
UPDATE public.content_items
SET deleted_at = now()
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
  AND deleted_at IS NULL AND last_seen_run IS DISTINCT FROM %(run_id)s

-- name: content_export_rows
-- Read through a server-side cursor; `data` only when the format carries it.
SELECT hubspot_id, content_type::text AS content_type, name, slug, url, state, language,
       hubspot_updated_at, archived, deleted_at, synced_at,
       CASE WHEN %(with_data)s THEN data END AS data
FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
ORDER BY hubspot_id

-- name: content_count
SELECT count(*) AS n FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
