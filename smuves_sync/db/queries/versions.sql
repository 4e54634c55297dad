-- Content history (smuves_sync/db/versions.py): an object's versions, one version with its
-- document, the changes feed of a portal, retention. Every version is read from the view
-- content_history: the versions of content_versions and the first versions still kept in
-- their rows of content_items. The history is written by the triggers content_history_begin,
-- content_history_inserted, content_history_updated and content_history_removed
-- (migrations/functions/history.sql), never here.

-- name: versions_of_object
-- An object's versions in order, after version %(after)s (NULL: from the first), at most
-- %(limit)s of them (NULL: all).
SELECT v.content_type::text AS content_type, v.hubspot_id, v.version, v.event::text AS event,
       v.hash, v.seen_from_run, v.seen_until_run, v.recorded_at, v.superseded_at
FROM public.content_history AS v
WHERE v.portal_id = %(portal_id)s AND v.content_type = %(content_type)s::text
  AND v.hubspot_id = %(hubspot_id)s
  AND (%(after)s::integer IS NULL OR v.version > %(after)s::integer)
ORDER BY v.version
LIMIT %(limit)s

-- name: version_latest
-- The number of an object's current version: its row's (one primary-key probe), or, for an
-- object whose row was removed, its newest kept version's. The one look-up of it (the
-- exports' `_version` too).
SELECT coalesce(
    (SELECT c.version FROM public.content_items AS c
     WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s::text
       AND c.hubspot_id = %(hubspot_id)s),
    (SELECT max(v.version) FROM public.content_versions AS v
     WHERE v.portal_id = %(portal_id)s AND v.content_type = %(content_type)s::text
       AND v.hubspot_id = %(hubspot_id)s)) AS version

-- name: version_documents
-- Versions of an object with their documents. A version's document is stored once per object
-- and hash (content_history_end): its own, else the one another version of the object
-- holds for its hash, else (the current version's, or an event's that kept the document)
-- content_items.data.
SELECT v.content_type::text AS content_type, v.hubspot_id, v.version, v.event::text AS event,
       v.hash, v.seen_from_run, v.seen_until_run, v.recorded_at, v.superseded_at,
       coalesce(v.document, held.document, c.data) AS document
FROM public.content_history AS v
LEFT JOIN LATERAL (
    SELECT d.document FROM public.content_versions AS d
    WHERE v.document IS NULL
      AND d.portal_id = v.portal_id AND d.content_type = v.content_type
      AND d.hubspot_id = v.hubspot_id AND d.hash = v.hash AND d.document IS NOT NULL
    LIMIT 1
) AS held ON true
LEFT JOIN public.content_items AS c
       ON v.document IS NULL AND held.document IS NULL
      AND c.portal_id = v.portal_id AND c.content_type = v.content_type
      AND c.hubspot_id = v.hubspot_id AND c.content_hash = v.hash
WHERE v.portal_id = %(portal_id)s AND v.content_type = %(content_type)s::text
  AND v.hubspot_id = %(hubspot_id)s AND v.version = ANY (%(versions)s::integer[])
ORDER BY v.version

-- name: versions_changes
-- What changed in a portal: its versions in the order they were recorded, each with the
-- event that began it and the object's name now. Filters: made by run %(since_run)s or a
-- later one, recorded at or after %(since)s, of one type; after the keyset key
-- (%(after_at)s, %(after_id)s); at most %(limit)s (NULL: all, for a server-side cursor).
-- A run's versions are recorded after the run was created, so its created_at bounds the walks
-- of content_versions_changes_idx and content_items_first_version_idx from below (a pruned
-- or invisible run bounds nothing: the filter on the run still holds).
SELECT v.id, v.recorded_at, v.seen_from_run AS run_id, v.content_type::text AS content_type,
       v.hubspot_id, v.version, v.event::text AS event, c.name
FROM public.content_history AS v
LEFT JOIN public.content_items AS c
       ON c.portal_id = v.portal_id AND c.content_type = v.content_type
      AND c.hubspot_id = v.hubspot_id
WHERE v.portal_id = %(portal_id)s
  AND v.recorded_at >= greatest(
          coalesce(%(since)s::timestamptz, '-infinity'),
          coalesce((SELECT r.created_at FROM public.runs AS r
                    WHERE r.id = %(since_run)s::bigint), '-infinity'))
  AND (%(since_run)s::bigint IS NULL OR v.seen_from_run >= %(since_run)s::bigint)
  AND (%(content_type)s::text IS NULL OR v.content_type = %(content_type)s::text)
  AND (%(after_at)s::timestamptz IS NULL
       OR (v.recorded_at, v.id) > (%(after_at)s::timestamptz, %(after_id)s::bigint))
ORDER BY v.recorded_at, v.id
LIMIT %(limit)s

-- name: versions_prune_cutoff
-- The moment before which superseded versions go: %(older_than)s before now.
SELECT coalesce(%(now)s::timestamptz, now()) - %(older_than)s::interval AS cutoff

-- name: versions_portals
-- The portals that have versions recorded, or objects deleted, before the cutoff (the login
-- role sees every one).
SELECT p.id FROM public.portals AS p
WHERE EXISTS (SELECT FROM public.content_versions AS v
              WHERE v.portal_id = p.id AND v.recorded_at < %(cutoff)s)
   OR EXISTS (SELECT FROM public.content_items AS c
              WHERE c.portal_id = p.id AND c.deleted_at < %(cutoff)s)
ORDER BY p.id

-- name: versions_prune_deleted
-- One batch of the retention of objects deleted in HubSpot: the rows and versions of up to
-- %(limit)s objects of the portal deleted before the cutoff.
SELECT * FROM public.prune_deleted_content(
    %(portal_id)s, %(cutoff)s, %(limit)s, %(dry_run)s)

-- name: versions_prune_batch
-- One batch of content history's retention (prune_content_versions), after the key of the
-- last one.
SELECT * FROM public.prune_content_versions(
    %(portal_id)s, %(cutoff)s, coalesce(%(after_at)s::timestamptz, '-infinity'),
    coalesce(%(after_id)s::bigint, 0), %(limit)s, %(dry_run)s)
