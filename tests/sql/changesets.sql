-- Changesets: what the tests look at, and a pushed changeset planted as a push would leave it.

-- name: changesets_all
SELECT id, portal_id, source FROM public.changesets ORDER BY id

-- name: plant_pushed_changeset
INSERT INTO public.changesets (portal_id, content_type, source, status, pushed_at)
VALUES (%(portal_id)s, %(content_type)s, 'import', 'pushed', now())
RETURNING id

-- name: plant_changeset_item
-- An item in any state, with the version its push produced.
INSERT INTO public.changeset_items (changeset_id, portal_id, content_type, hubspot_id,
                                    base_version, fields, before, state, applied_version,
                                    applied_at)
VALUES (%(changeset_id)s, %(portal_id)s, %(content_type)s, %(hubspot_id)s, %(base_version)s,
        %(fields)s, %(before)s, %(state)s, %(applied_version)s,
        CASE WHEN %(state)s = 'applied' THEN now() END)
