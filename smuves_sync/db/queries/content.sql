-- content_items (smuves_sync/db/content.py): one page of a fetch upserted in one statement,
-- the ids a fetch saw and the deletion sweep over them, the last confirmation of a portal's
-- type, the streaming read of exports, the API's pages and language groups, the dashboard's
-- counts.
--
-- content_upsert_page runs for every page a fetch stores, so its text stays under the 4 KB up
-- to which psycopg keeps a query's conversion instead of parsing it again on every call
-- (tests/unit/test_db_queries.py): what it does is said here, above its name.
--
-- One page as two parameters: %(documents)b, each object's JSON text (an array sent in
-- binary: no quoting to undo, no JSON to parse around the documents), and %(fields)s, a JSON
-- array of each object's id, promoted columns and hash (i, n, s, u, st, l, t, a, tr, h), in
-- the same order, zipped with the documents by ROWS FROM; both made by the caller.
--
-- Only what changed is written. Each object is first compared with its stored row (one
-- primary-key probe: LATERAL with LIMIT is never flattened into a join that could scan the
-- portal's rows) on everything a user can see: the document's hash, the promoted fields, the
-- archived flag, the deletion mark. An object equal on all of them is dropped before the
-- INSERT, so its row is neither written nor even locked (ON CONFLICT DO UPDATE locks the row
-- it conflicts with before its WHERE is tested, which writes WAL and dirties the page): a
-- re-sync of an unchanged portal writes nothing here. The ON CONFLICT ... WHERE repeats the
-- comparison for a row that changed between the probe and the insert.
-- Parsing a document into jsonb is most of what storing it costs, so a changed row whose
-- hash matches keeps its stored document, unparsed (no new TOAST value either). An object
-- seen again after it was marked deleted is live again. A new object's history begins in its
-- row: version 1, by the run whose fetch of the type is in flight (content_history_begin says
-- why here), its feed key and time the columns' defaults.
--
-- A page of new objects is not compared at all: content_upsert_page (db/content.py) first
-- hands it to content_insert_new_page (below), which inserts it as it is, and stores it here
-- only when that answers that the page holds a stored object (its first, or another: then
-- nothing of it was written). From then on the job's pages come here directly (NewPages).

-- name: content_upsert_page
WITH page AS (
    SELECT r.hubspot_id, r.name, r.slug, r.url, r.state, r.language, r.hubspot_updated_at,
           r.archived, r.translated_from_id, r.document, r.content_hash, s.stored_hash,
           s.stored_data
    FROM ROWS FROM (
             json_to_recordset(%(fields)s::json)
                 AS (i text, n text, s text, u text, st text, l text, t timestamptz,
                     a boolean, tr text, h text),
             unnest(%(documents)b::text[]))
         AS r (hubspot_id, name, slug, url, state, language, hubspot_updated_at, archived,
               translated_from_id, content_hash, document)
    LEFT JOIN LATERAL (
        SELECT c.content_hash AS stored_hash, c.data AS stored_data, c.deleted_at, c.name,
               c.slug, c.url, c.state, c.language, c.hubspot_updated_at, c.archived,
               c.translated_from_id
        FROM public.content_items AS c
        WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s::text
          AND c.hubspot_id = r.hubspot_id
        LIMIT 1
    ) AS s ON true
    WHERE s.stored_data IS NULL
       OR s.deleted_at IS NOT NULL
       OR (s.stored_hash, s.name, s.slug, s.url, s.state, s.language, s.hubspot_updated_at,
           s.archived, s.translated_from_id)
          IS DISTINCT FROM (r.content_hash, r.name, r.slug, r.url, r.state, r.language,
                            r.hubspot_updated_at, r.archived, r.translated_from_id)
)
INSERT INTO public.content_items AS c
    (portal_id, content_type, hubspot_id, name, slug, url, state, language,
     hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
     changed_run, changed_at, translated_from_id, version, first_version_run)
SELECT %(portal_id)s, %(content_type)s::text, p.hubspot_id, p.name, p.slug, p.url, p.state,
       p.language, p.hubspot_updated_at, p.archived, NULL,
       CASE WHEN p.stored_hash = p.content_hash THEN p.stored_data ELSE p.document::jsonb END,
       p.content_hash, %(run_id)s, %(run_id)s, now(), p.translated_from_id, 1,
       (SELECT f.run_id FROM public.content_history_run(%(portal_id)s, %(content_type)s::text) f)
FROM page AS p
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
    changed_run = excluded.changed_run,
    changed_at = excluded.changed_at,
    translated_from_id = excluded.translated_from_id
WHERE c.deleted_at IS NOT NULL
   OR (c.content_hash, c.name, c.slug, c.url, c.state, c.language, c.hubspot_updated_at,
       c.archived, c.translated_from_id)
      IS DISTINCT FROM (excluded.content_hash, excluded.name, excluded.slug, excluded.url,
                        excluded.state, excluded.language, excluded.hubspot_updated_at,
                        excluded.archived, excluded.translated_from_id)

-- name: content_insert_new_page
-- A page of new objects inserted without comparing (content_insert_new_page in
-- migrations/functions/content.sql, with the same parameters as content_upsert_page and the
-- page's first id): the rows inserted, or NULL, and then nothing written, when the page holds
-- a stored object and content_upsert_page must store it.
SELECT public.content_insert_new_page(%(portal_id)s, %(content_type)s::text, %(run_id)s,
                                      %(first_id)s, %(fields)s::json,
                                      %(documents)b::text[]) AS inserted

-- name: content_export_rows
-- Read through a server-side cursor; `data` only when the format carries it, the objects
-- marked deleted only when asked for. `synced_at`: when a sync last confirmed the row as it
-- is (content_page says how); `version`: the object's current version number (the edit
-- export's `_version`).
SELECT c.hubspot_id, c.content_type::text AS content_type, c.name, c.slug, c.url, c.state,
       c.language, c.translated_from_id, c.hubspot_updated_at, c.archived, c.deleted_at,
       c.version,
       greatest(c.changed_at, s.confirmed_at) AS synced_at,
       CASE WHEN %(with_data)s THEN c.data END AS data
FROM public.content_items AS c
LEFT JOIN public.content_syncs AS s
       ON s.portal_id = c.portal_id AND s.content_type = c.content_type
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND (%(include_deleted)s::boolean OR c.deleted_at IS NULL)
ORDER BY c.hubspot_id

-- name: content_export_counts
-- What an export of the type writes (`rows`: content_export_rows' count) and how many of the
-- type's objects are marked deleted, which it leaves out or carries.
SELECT count(*) FILTER (WHERE %(include_deleted)s::boolean OR deleted_at IS NULL) AS rows,
       count(*) FILTER (WHERE deleted_at IS NOT NULL) AS deleted
FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s

-- name: content_page
-- The API's keyset page in primary-key order (content_type, hubspot_id) after the given key;
-- live objects only. %(pattern)s is an ILIKE pattern whose backslashes, percent signs and
-- underscores from the user are already escaped. One row more than the page is asked for,
-- to know whether another page follows.
-- `synced_at` is when a sync last confirmed the object as shown: the last completed fetch of
-- its type (content_syncs), which saw or had HubSpot confirm every object of it, or the
-- moment its row was last written, if a fetch since then wrote it.
SELECT c.content_type::text AS content_type, c.hubspot_id, c.name, c.slug, c.url, c.state,
       c.language, c.translated_from_id, c.hubspot_updated_at, c.archived,
       greatest(c.changed_at, s.confirmed_at) AS synced_at, c.data
FROM public.content_items AS c
LEFT JOIN public.content_syncs AS s
       ON s.portal_id = c.portal_id AND s.content_type = c.content_type
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
       m.language, m.translated_from_id, m.hubspot_updated_at, m.archived,
       greatest(m.changed_at, s.confirmed_at) AS synced_at,
       CASE WHEN %(with_data)s AND m.hubspot_id = a.hubspot_id THEN m.data END AS data
FROM asked AS a
JOIN public.content_items AS m
  ON m.portal_id = %(portal_id)s AND m.content_type = a.content_type
 AND (m.hubspot_id = a.root OR m.translated_from_id = a.root)
 AND m.deleted_at IS NULL
LEFT JOIN public.content_syncs AS s
       ON s.portal_id = m.portal_id AND s.content_type = m.content_type
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
