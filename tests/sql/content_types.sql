-- The content types' list in the database, and a row in each column that holds a type.

-- name: content_types_listed
SELECT name FROM public.content_types ORDER BY name

-- name: content_types_domain_check
-- The domain's constraint as Postgres prints it: the list it was generated from.
SELECT c.conname AS name, pg_catalog.pg_get_constraintdef(c.oid) AS definition
FROM pg_catalog.pg_constraint AS c
WHERE c.contypid = 'public.content_type'::pg_catalog.regtype

-- name: content_types_add
INSERT INTO public.content_types (name) VALUES (%(word)s)

-- name: content_types_remove
DELETE FROM public.content_types WHERE name = %(word)s

-- name: content_types_in_runs
INSERT INTO public.runs (portal_id, kind, content_types)
VALUES (%(portal_id)s, 'fetch', ARRAY['site_page', %(word)s]::text[])

-- name: content_types_in_schedules
INSERT INTO public.schedules (portal_id, cron_expression, content_types)
VALUES (%(portal_id)s, '0 3 * * *', ARRAY[%(word)s]::text[])

-- name: content_types_in_jobs
INSERT INTO public.jobs (run_id, portal_id, kind, content_type)
VALUES (%(run_id)s, %(portal_id)s, 'fetch', %(word)s)

-- name: content_types_in_content_items
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, data)
VALUES (%(portal_id)s, %(word)s, '1', '{}')

-- name: content_types_in_exports
INSERT INTO public.exports (run_id, portal_id, content_type, format)
VALUES (%(run_id)s, %(portal_id)s, %(word)s, 'csv')

-- name: content_types_stored
SELECT content_type::text AS content_type, hubspot_id, name, slug, language, archived
FROM public.content_items
WHERE portal_id = %(portal_id)s
ORDER BY content_type, hubspot_id
