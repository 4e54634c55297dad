-- content_items (smuves_sync/db/content.py): one page of a fetch upserted in one statement,
-- deletions after a complete fetch, the streaming read of exports, the API's pages, the
-- dashboard's counts.

-- name: content_upsert_page
-- One page as parallel arrays, sent in binary (no quoting to undo, no JSON array to parse
-- around the documents): %(documents)b holds each object's JSON text and %(content_hashes)b
-- its hash, both made by the caller. Parsing a document into jsonb is most of what storing
-- it costs, so a document whose hash matches the stored one is not parsed at all: the
-- subquery (a primary-key probe per object; a scalar subquery is never turned into a join
-- that could scan the portal's rows) hands the stored value on, and the update keeps it (no
-- new TOAST value either). Every object is still stamped with the run that saw it, which the
-- deletion pass relies on, and an object seen again is live again.
INSERT INTO public.content_items AS c
    (portal_id, content_type, hubspot_id, name, slug, url, state, language,
     hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
     last_seen_run, synced_at, translated_from_id)
SELECT %(portal_id)s, %(content_type)s::text, r.hubspot_id, r.name, r.slug, r.url, r.state,
       r.language, r.hubspot_updated_at, r.archived, NULL,
       coalesce((SELECT s.data FROM public.content_items AS s
                 WHERE s.portal_id = %(portal_id)s AND s.content_type = %(content_type)s::text
                   AND s.hubspot_id = r.hubspot_id AND s.content_hash = r.content_hash),
                r.document::jsonb),
       r.content_hash, %(run_id)s, %(run_id)s, now(), r.translated_from_id
FROM unnest(%(hubspot_ids)b::text[], %(names)b::text[], %(slugs)b::text[], %(urls)b::text[],
            %(states)b::text[], %(languages)b::text[], %(updated_ats)b::timestamptz[],
            %(archived)b::boolean[], %(documents)b::text[], %(content_hashes)b::text[],
            %(translated_from_ids)b::text[])
     AS r (hubspot_id, name, slug, url, state, language, hubspot_updated_at, archived,
           document, content_hash, translated_from_id)
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
    synced_at = excluded.synced_at,
    translated_from_id = excluded.translated_from_id

-- name: content_mark_unseen_deleted
-- After a complete fetch by run %(run_id)s: what it did not see is gone from HubSpot.
UPDATE public.content_items
SET deleted_at = now()
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
  AND deleted_at IS NULL AND last_seen_run IS DISTINCT FROM %(run_id)s

-- name: content_export_rows
-- Read through a server-side cursor; `data` only when the format carries it.
SELECT hubspot_id, content_type::text AS content_type, name, slug, url, state, language,
       translated_from_id, hubspot_updated_at, archived, deleted_at, synced_at,
       CASE WHEN %(with_data)s THEN data END AS data
FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
ORDER BY hubspot_id

-- name: content_count
SELECT count(*) AS n FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s

-- name: content_page
-- The API's keyset page in primary-key order (content_type, hubspot_id) after the given key;
-- live objects only. %(pattern)s is an ILIKE pattern whose backslashes, percent signs and
-- underscores from the user are already escaped. One row more than the page is asked for,
-- to know whether another page follows.
SELECT c.content_type::text AS content_type, c.hubspot_id, c.name, c.slug, c.url, c.state,
       c.language, c.translated_from_id, c.hubspot_updated_at, c.archived, c.synced_at, c.data
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s
  AND c.deleted_at IS NULL
  AND (%(content_type)s::text IS NULL OR c.content_type = %(content_type)s::text)
  AND (%(pattern)s::text IS NULL
       OR c.name ILIKE %(pattern)s::text
       OR c.slug ILIKE %(pattern)s::text
       OR c.url ILIKE %(pattern)s::text)
  AND (%(after_type)s::text IS NULL
       OR (c.content_type::text, c.hubspot_id) > (%(after_type)s::text, %(after_id)s::text))
ORDER BY c.content_type, c.hubspot_id
LIMIT %(limit)s + 1

-- name: content_language_groups
-- The API's language groups: the live members of the groups of the live objects asked for
-- (parallel arrays of types and ids), each object itself included, with the key it was
-- asked for. A group is its primary (translated_from_id NULL) and every object translated
-- from it, so an asked object's group is found from its root: its translated_from_id, or its
-- own id. Members come primary first, then by language; `data` only of the asked objects,
-- when %(with_data)s.
WITH asked AS (
    SELECT c.content_type, c.hubspot_id, coalesce(c.translated_from_id, c.hubspot_id) AS root
    FROM unnest(%(content_types)s::text[], %(hubspot_ids)s::text[])
         AS a (content_type, hubspot_id)
    JOIN public.content_items AS c
      ON c.portal_id = %(portal_id)s AND c.content_type = a.content_type
     AND c.hubspot_id = a.hubspot_id AND c.deleted_at IS NULL
)
SELECT a.content_type::text AS asked_type, a.hubspot_id AS asked_id,
       m.content_type::text AS content_type, m.hubspot_id, m.name, m.slug, m.url, m.state,
       m.language, m.translated_from_id, m.hubspot_updated_at, m.archived, m.synced_at,
       CASE WHEN %(with_data)s AND m.hubspot_id = a.hubspot_id THEN m.data END AS data
FROM asked AS a
JOIN public.content_items AS m
  ON m.portal_id = %(portal_id)s AND m.content_type = a.content_type
 AND (m.hubspot_id = a.root OR m.translated_from_id = a.root)
 AND m.deleted_at IS NULL
ORDER BY a.content_type, a.hubspot_id, m.translated_from_id NULLS FIRST, m.language,
         m.hubspot_id

-- name: content_count_by_type
-- Stored objects of the portals by type: live, archived (still in HubSpot) and deleted
-- (gone from HubSpot). Reads every stored row of these portals: its cost grows with their
-- content, not with the queue.
SELECT c.portal_id, c.content_type::text AS content_type,
       count(*) FILTER (WHERE c.deleted_at IS NULL AND NOT c.archived) AS live,
       count(*) FILTER (WHERE c.deleted_at IS NULL AND c.archived) AS archived,
       count(*) FILTER (WHERE c.deleted_at IS NOT NULL) AS deleted
FROM public.content_items AS c
WHERE c.portal_id = ANY (%(portal_ids)s::bigint[])
GROUP BY c.portal_id, c.content_type
