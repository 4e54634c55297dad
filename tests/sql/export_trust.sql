-- Statements of the export trust tests (tests/integration/api/test_export_trust.py): what a
-- runtime login might try against an exports row, written as an attacker would.

-- name: exporttrust_set_path
-- Point an export at a file of the caller's choosing.
UPDATE public.exports SET path = %(path)s WHERE id = %(export_id)s

-- name: exporttrust_insert
-- A new export "already" pointing at a file of the caller's choosing.
INSERT INTO public.exports (run_id, portal_id, content_type, format, path)
VALUES (%(run_id)s, %(portal_id)s, 'site_page', 'csv', %(path)s)
