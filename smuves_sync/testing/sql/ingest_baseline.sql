-- The naive way to store a fetched page, one INSERT per object: the baseline that
-- scripts/bench_sync.py sets beside content_upsert_page (smuves_sync/testing/ingest_baseline.py).

-- name: content_upsert_one
INSERT INTO public.content_items AS c
    (portal_id, content_type, hubspot_id, name, slug, url, state, language,
     hubspot_updated_at, archived, data, content_hash, first_seen_run, changed_run)
VALUES (%(portal_id)s, %(content_type)s, %(hubspot_id)s, %(name)s, %(slug)s, %(url)s,
        %(state)s, %(language)s, %(hubspot_updated_at)s, %(archived)s, %(data)s,
        md5(%(data)s::jsonb::text), %(run_id)s, %(run_id)s)
ON CONFLICT (portal_id, content_type, hubspot_id) DO UPDATE
SET name = excluded.name, slug = excluded.slug, url = excluded.url, state = excluded.state,
    language = excluded.language, hubspot_updated_at = excluded.hubspot_updated_at,
    archived = excluded.archived, deleted_at = NULL, data = excluded.data,
    content_hash = excluded.content_hash, changed_run = excluded.changed_run,
    changed_at = now()

-- name: content_parse_documents
-- The bound over content_upsert_page's rate: the same page sent the same way, and Postgres
-- only parsing its documents into jsonb (no row written).
SELECT count(d::jsonb) AS n FROM unnest(%(documents)b::text[]) AS d

-- name: content_floor_table_create
-- The table under the floor (content_store_bare), made in the benchmark's scratch database
-- only: the documents alone, no key, index, trigger or policy, compressed as
-- content_items.data is (lz4 where the server has it, else pglz: the same TOAST work per
-- document as ours).
DO $$
BEGIN
    CREATE TABLE public.ingest_floor_documents (data jsonb NOT NULL);
    EXECUTE pg_catalog.format(
        'ALTER TABLE public.ingest_floor_documents ALTER COLUMN data SET COMPRESSION %s',
        (SELECT CASE a.attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz'
                                      ELSE 'default' END
         FROM pg_catalog.pg_attribute AS a
         WHERE a.attrelid = 'public.content_items'::regclass AND a.attname = 'data'));
    GRANT INSERT ON public.ingest_floor_documents TO smuves_worker;
END
$$

-- name: content_store_bare
-- The floor under content_upsert_page: the same page sent the same way, its documents parsed
-- and written into the bare table above, and nothing else.
INSERT INTO public.ingest_floor_documents (data)
SELECT d::jsonb FROM unnest(%(documents)b::text[]) AS d
