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
-- The floor under content_upsert_page: the same page sent the same way, and Postgres only
-- parsing its documents into jsonb (no row written).
SELECT count(d::jsonb) AS n FROM unnest(%(documents)b::text[]) AS d
