-- Reads of the push tests (tests/integration/push/, the write-back acceptance test), as the
-- login role.

-- name: push_versions_of_changeset
-- The versions a changeset's push produced, with the items that name them.
SELECT v.hubspot_id, v.version, i.applied_version
FROM public.content_versions AS v
JOIN public.changeset_items AS i
  ON i.portal_id = v.portal_id AND i.content_type = v.content_type
 AND i.hubspot_id = v.hubspot_id AND i.changeset_id = v.changeset_id
WHERE v.changeset_id = %(changeset_id)s
ORDER BY v.hubspot_id

-- name: push_job_attempts
SELECT j.content_type::text AS content_type, j.status::text AS status, j.attempts
FROM public.jobs AS j
WHERE j.run_id = %(run_id)s
ORDER BY j.content_type

-- name: push_intents_of_changeset
SELECT p.state, p.hubspot_ids FROM public.push_intents AS p
WHERE p.changeset_id = %(changeset_id)s
ORDER BY p.id

-- name: plant_push_intent
-- A decided intent of a push job of the changeset (as the login role).
INSERT INTO public.push_intents
    (portal_id, changeset_id, job_id, content_type, hubspot_ids, seen_updated, state)
VALUES (%(portal_id)s, %(changeset_id)s, %(job_id)s, 'site_page', ARRAY['1'], ARRAY['t0'],
        'decided')
