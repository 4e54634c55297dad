-- What a re-sync wrote, measured from outside (smuves_sync/testing/resync_probe.py, for
-- scripts/bench_sync.py --resync). Run as a superuser: pg_walinspect reads the server's WAL.

-- name: probe_row_versions
-- Each row's xmin: it moves exactly when the row is written (a new row version).
SELECT content_type::text || ':' || hubspot_id AS key, xmin::text AS xmin
FROM public.content_items WHERE portal_id = %(portal_id)s

-- name: probe_hold_wal
-- A temporary physical replication slot holds the server's WAL from now on, so that
-- pg_walinspect can still read it after the re-sync on a busy server (whose checkpoints
-- recycle WAL segments within seconds). Dropped by probe_release_wal, or when the session ends.
SELECT slot_name FROM pg_catalog.pg_create_physical_replication_slot(
    %(slot)s, immediately_reserve => true, temporary => true)

-- name: probe_release_wal
-- Postgres drops a temporary slot itself on any error in its session (a server without
-- pg_walinspect raises one), so the slot may already be gone.
SELECT count(pg_catalog.pg_drop_replication_slot(slot_name)) AS dropped
FROM pg_catalog.pg_replication_slots
WHERE slot_name = %(slot)s

-- name: probe_wal_position
SELECT pg_catalog.pg_current_wal_lsn()::text AS lsn

-- name: probe_wal_between
SELECT pg_catalog.pg_wal_lsn_diff(%(until)s::pg_lsn, %(since)s::pg_lsn)::bigint AS bytes

-- name: probe_content_items_size
SELECT pg_catalog.pg_total_relation_size('public.content_items') AS total_bytes,
       pg_catalog.pg_relation_size('public.content_items') AS heap_bytes

-- name: probe_content_items_fillfactor
SELECT coalesce((SELECT o.option_value::int
                 FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                 WHERE o.option_name = 'fillfactor'), 100) AS fillfactor
FROM pg_catalog.pg_class AS c WHERE c.oid = 'public.content_items'::regclass

-- name: probe_content_items_updates
-- Counted when the writing sessions report their statistics (at the latest when they end).
SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot_updates, n_tup_ins AS inserts
FROM pg_catalog.pg_stat_user_tables WHERE relid = 'public.content_items'::regclass

-- name: probe_walinspect
CREATE EXTENSION IF NOT EXISTS pg_walinspect

-- name: probe_wal_of_this_database
-- The WAL between two positions that this database wrote: records touching its blocks, and
-- the other records (commits) of the same transactions; of those, the bytes of full-page
-- images (a page's first change after a checkpoint logs the whole page: how many depends on
-- when checkpoints fall, not on how much is written) and the bytes of the records that
-- touched content_items (its heap, TOAST and indexes).
WITH files AS (
    SELECT pg_catalog.pg_relation_filenode(c.oid)::text AS node
    FROM pg_catalog.pg_class AS c
    WHERE c.oid = 'public.content_items'::regclass
       OR c.oid = (SELECT reltoastrelid FROM pg_catalog.pg_class
                   WHERE oid = 'public.content_items'::regclass)
       OR c.oid IN (SELECT indexrelid FROM pg_catalog.pg_index
                    WHERE indrelid IN ('public.content_items'::regclass,
                                       (SELECT reltoastrelid FROM pg_catalog.pg_class
                                        WHERE oid = 'public.content_items'::regclass)))
), db AS (
    SELECT oid::text AS oid FROM pg_catalog.pg_database WHERE datname = current_database()
), records AS (
    SELECT w.xid, w.record_length, w.fpi_length,
           w.block_ref ~ ('/' || (SELECT oid FROM db) || '/') AS ours,
           w.block_ref ~ ('/' || (SELECT oid FROM db) || '/('
                          || (SELECT string_agg(node, '|') FROM files) || ')( |$)') AS content
    FROM pg_get_wal_records_info(%(since)s::pg_lsn, %(until)s::pg_lsn) AS w
), xids AS (
    SELECT DISTINCT xid FROM records WHERE ours AND xid <> '0'::xid
)
SELECT coalesce(sum(record_length), 0)::bigint AS bytes,
       coalesce(sum(fpi_length), 0)::bigint AS full_page_image_bytes,
       coalesce(sum(record_length) FILTER (WHERE content), 0)::bigint AS content_bytes
FROM records AS r
WHERE r.ours OR r.xid IN (SELECT xid FROM xids)
