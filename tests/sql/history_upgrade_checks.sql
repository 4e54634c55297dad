-- Reads and writes of the upgrade of content history (test_history_upgrade.py): a database
-- whose history was written into content_versions alone, before the first versions moved
-- into their rows. Plain statements, so that they run on the schema before and after.

-- name: history_upgrade_portal
WITH owner AS (
    INSERT INTO public.app_users (email) VALUES ('upgrade@example.com') RETURNING id
)
INSERT INTO public.portals (id, name, owner_id, time_zone)
SELECT %(portal_id)s, 'upgrade', owner.id, 'UTC' FROM owner

-- name: history_upgrade_items
-- Objects '1' … %(n)s of the portal's site pages, each with a document of its own.
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, name, data, content_hash)
SELECT %(portal_id)s, 'site_page', g::text, 'Page ' || g,
       jsonb_build_object('id', g::text, 'name', 'Page ' || g), 'hash-' || g
FROM generate_series(1, %(n)s) AS g

-- name: history_upgrade_edit
-- A new document for the objects, or (%(name)s NULL) their first one again.
UPDATE public.content_items
SET name = coalesce(%(name)s, 'Page ' || hubspot_id),
    data = jsonb_build_object('id', hubspot_id, 'name', coalesce(%(name)s, 'Page ' || hubspot_id)),
    content_hash = CASE WHEN %(name)s::text IS NULL THEN 'hash-' || hubspot_id
                        ELSE %(name)s || '-' || hubspot_id END
WHERE portal_id = %(portal_id)s AND hubspot_id = ANY (%(hubspot_ids)s::text[])

-- name: history_upgrade_archive
UPDATE public.content_items SET archived = true
WHERE portal_id = %(portal_id)s AND hubspot_id = ANY (%(hubspot_ids)s::text[])

-- name: history_upgrade_versions
-- Every version of the portal as the history's readers give it, each with its document as
-- version_documents finds it (its own, else another version's of its hash, else its row's),
-- from the relation named: content_versions (before the upgrade: every version was there) or the
-- view content_history (after).
SELECT v.hubspot_id, v.version, v.event::text AS event, v.hash, v.seen_from_run,
       v.seen_until_run, v.recorded_at, v.superseded_at, v.id,
       coalesce(v.document,
                (SELECT d.document FROM public.content_versions AS d
                 WHERE d.portal_id = v.portal_id AND d.content_type = v.content_type
                   AND d.hubspot_id = v.hubspot_id AND d.hash = v.hash
                   AND d.document IS NOT NULL
                 LIMIT 1),
                (SELECT c.data FROM public.content_items AS c
                 WHERE c.portal_id = v.portal_id AND c.content_type = v.content_type
                   AND c.hubspot_id = v.hubspot_id AND c.content_hash = v.hash)) AS document
FROM {source} AS v
WHERE v.portal_id = %(portal_id)s
ORDER BY v.hubspot_id, v.version

-- name: history_upgrade_stored
-- What content_versions holds of the portal, and each row's version number.
SELECT (SELECT count(*) FROM public.content_versions WHERE portal_id = %(portal_id)s) AS versions,
       (SELECT array_agg(hubspot_id || ':' || version ORDER BY hubspot_id)
        FROM public.content_items WHERE portal_id = %(portal_id)s) AS rows
