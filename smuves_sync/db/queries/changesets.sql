-- changesets and changeset_items (smuves_sync/db/changesets.py): a changeset and its items
-- stored in one transaction, a changeset as visible, its items and their counts, and the
-- objects an import compares its rows with. Row-level security decides who sees and who may
-- insert (policies changesets_app*, changeset_items_app* in functions/security.sql); the
-- composite foreign key keeps each item in its changeset's portal.

-- name: changeset_create
INSERT INTO public.changesets (portal_id, owner_id, content_type, source, rolls_back, filename)
VALUES (%(portal_id)s, %(owner_id)s, %(content_type)s, %(source)s, %(rolls_back)s,
        %(filename)s)
RETURNING *

-- name: changeset_items_add
-- %(items)s: a JSON array of items, one object each with the columns below.
INSERT INTO public.changeset_items (changeset_id, portal_id, content_type, hubspot_id,
                                    base_version, base_updated, fields, before, state, reason,
                                    warnings)
SELECT %(changeset_id)s, %(portal_id)s, i.content_type, i.hubspot_id, i.base_version,
       i.base_updated, coalesce(i.fields, '{}'), coalesce(i.before, '{}'), i.state, i.reason,
       coalesce(i.warnings, '{}')
FROM jsonb_to_recordset(%(items)s::jsonb)
     AS i (content_type text, hubspot_id text, base_version integer, base_updated text,
           fields jsonb, before jsonb, state text, reason text, warnings text[])

-- name: changeset_get
SELECT * FROM public.changesets WHERE id = %(changeset_id)s

-- name: changeset_items_of
-- A changeset's items in key order, after (%(after_type)s, %(after_id)s), at most %(limit)s
-- (NULL: all); of one state when %(state)s is set.
SELECT * FROM public.changeset_items
WHERE changeset_id = %(changeset_id)s
  AND (%(state)s::text IS NULL OR state = %(state)s::text)
  AND (%(after_id)s::text IS NULL
       OR (content_type::text, hubspot_id) > (%(after_type)s::text, %(after_id)s::text))
ORDER BY content_type, hubspot_id
LIMIT %(limit)s

-- name: changeset_counts
-- How many items of each state.
SELECT state, count(*) AS n FROM public.changeset_items
WHERE changeset_id = %(changeset_id)s
GROUP BY state

-- name: changeset_bases
-- The stored objects an import's rows name: each one's current document, deletion mark, slug
-- and current version number.
SELECT c.hubspot_id, c.data, c.deleted_at, c.slug, c.version
FROM public.content_items AS c
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.hubspot_id = ANY (%(hubspot_ids)s::text[])

-- name: changeset_slugs_taken
-- Which of the wanted slugs another live object of the portal's type already has: each
-- (hubspot_id, slug) pair wanted, with an object holding that slug. One pass over the type's
-- rows (a hash join on the slug), not a probe per slug: no index holds slugs.
SELECT DISTINCT ON (w.hubspot_id) w.hubspot_id, w.slug, c.hubspot_id AS held_by
FROM unnest(%(hubspot_ids)s::text[], %(slugs)s::text[]) AS w (hubspot_id, slug)
JOIN public.content_items AS c
  ON c.slug = w.slug AND c.hubspot_id <> w.hubspot_id
WHERE c.portal_id = %(portal_id)s AND c.content_type = %(content_type)s
  AND c.deleted_at IS NULL
ORDER BY w.hubspot_id, c.hubspot_id
