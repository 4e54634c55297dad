-- Reads and plants of the content store tests (tests/integration/test_content_store.py).

-- name: content_rows_of_type
SELECT hubspot_id, name, slug, url, state, language, hubspot_updated_at, archived,
       deleted_at, data, content_hash, first_seen_run, changed_run, changed_at,
       translated_from_id, xmin::text AS xmin
FROM public.content_items
WHERE portal_id = %(portal_id)s AND content_type = %(content_type)s
ORDER BY hubspot_id

-- name: content_replace_data
-- The stored document changes behind the store's back; its hash stays.
UPDATE public.content_items SET data = %(data)s
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s

-- name: content_set_hash
UPDATE public.content_items SET content_hash = %(content_hash)s
WHERE portal_id = %(portal_id)s AND hubspot_id = %(hubspot_id)s

-- name: content_items_size
-- The table's size on disk (heap, TOAST, indexes) and the dead row versions its updates and
-- deletes have left (n_tup_upd + n_tup_del, as counted so far).
SELECT pg_catalog.pg_total_relation_size('public.content_items') AS bytes,
       pg_catalog.pg_stat_get_tuples_updated('public.content_items'::regclass)
       + pg_catalog.pg_stat_get_tuples_deleted('public.content_items'::regclass)
       AS dead_tuples_written

-- name: check_page_settings
-- What a page's transaction runs with: the portal it sees, and whether its COMMIT waits for
-- the WAL flush.
SELECT pg_catalog.current_setting('app.portal_id', true) AS portal_id,
       pg_catalog.current_setting('synchronous_commit') AS synchronous_commit

-- name: content_insert_row
-- One content row written by hand (the operator's login), beside what fetches write.
INSERT INTO public.content_items (portal_id, content_type, hubspot_id, data)
VALUES (%(portal_id)s, %(content_type)s, %(hubspot_id)s, '{}')

-- name: content_move_rows
UPDATE public.content_items SET portal_id = %(to_portal)s WHERE portal_id = %(portal_id)s

-- name: portal_lock_nowait
-- Fails at once (LockNotAvailable) while a transaction holds the portal's row, e.g. FOR KEY
-- SHARE as content written for it does.
SELECT p.id FROM public.portals AS p WHERE p.id = %(portal_id)s FOR UPDATE NOWAIT
