-- Stored content: the content types, the portal checks on content items, pruning deleted
-- content.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- The rows a statement inserted (a statement trigger), or a row moved to another portal (a
-- row trigger, fired only when portal_id changes).
CREATE OR REPLACE FUNCTION public.content_items_portal_exists() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        IF TG_LEVEL = 'ROW' THEN
            PERFORM public.content_portals_lock(ARRAY[NEW.portal_id]);
        ELSE
            PERFORM public.content_portals_lock(
                ARRAY(SELECT DISTINCT n.portal_id FROM new_rows AS n));
        END IF;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_items_portal_exists() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_items_portal_exists AFTER INSERT ON public.content_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_items_portal_exists();

CREATE OR REPLACE TRIGGER content_items_portal_moved AFTER UPDATE OF portal_id ON public.content_items FOR EACH ROW WHEN ((old.portal_id IS DISTINCT FROM new.portal_id)) EXECUTE FUNCTION public.content_items_portal_exists();

-- The portals p_ids (distinct) exist, and stay locked FOR KEY SHARE until the transaction
-- ends, as a foreign key's check leaves them: a portal being deleted is waited for, and then
-- refused; none is deleted under the rows that name it. A foreign key's error otherwise.
CREATE OR REPLACE FUNCTION public.content_portals_lock(p_ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_found bigint;
    BEGIN
        PERFORM FROM public.portals AS p WHERE p.id = ANY (p_ids) FOR KEY SHARE;
        GET DIAGNOSTICS v_found = ROW_COUNT;
        IF v_found < cardinality(p_ids) THEN
            RAISE EXCEPTION 'content_items names a portal that does not exist'
                USING ERRCODE = 'foreign_key_violation',
                      CONSTRAINT = 'content_items_portal_exists';
        END IF;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_portals_lock(p_ids bigint[]) FROM PUBLIC, smuves_app, smuves_worker;

-- A page of objects of which none is stored yet (a first sync's pages, the new objects at the
-- end of a re-sync's listing), inserted as they are: no comparison with stored rows and no
-- ON CONFLICT, whose speculative insertion probes the key a second time and writes a
-- confirmation record per row. content_upsert_page (smuves_sync/db/content.py) calls it
-- first and stores the page itself, comparing, when it answers NULL: when the page's first
-- object (p_first_id) is stored (a re-sync's page: nothing is parsed, written or locked here),
-- or when another object of the page is, or is inserted meanwhile by another transaction (the
-- key's unique violation rolls back what this inserted, all of it). What it inserts is what
-- content_upsert_page would: the same columns, version 1 of the run whose fetch of the type
-- is in flight, the same triggers. Runs with its caller's rights, under the caller's
-- row-level security and grants.
CREATE OR REPLACE FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_inserted integer;
        v_constraint text;
    BEGIN
        IF EXISTS (SELECT FROM public.content_items AS c
                   WHERE c.portal_id = p_portal_id AND c.content_type = p_content_type
                     AND c.hubspot_id = p_first_id) THEN
            RETURN NULL;
        END IF;
        INSERT INTO public.content_items
            (portal_id, content_type, hubspot_id, name, slug, url, state, language,
             hubspot_updated_at, archived, deleted_at, data, content_hash, first_seen_run,
             changed_run, changed_at, translated_from_id, version, first_version_run)
        SELECT p_portal_id, p_content_type, r.i, r.n, r.s, r.u, r.st, r.l, r.t, r.a, NULL,
               r.document::jsonb, r.h, p_run_id, p_run_id, now(), r.tr, 1,
               (SELECT f.run_id FROM public.content_history_run(p_portal_id, p_content_type) AS f)
        FROM ROWS FROM (
                 json_to_recordset(p_fields)
                     AS (i text, n text, s text, u text, st text, l text, t timestamptz,
                         a boolean, tr text, h text),
                 unnest(p_documents))
             AS r (i, n, s, u, st, l, t, a, tr, h, document);
        GET DIAGNOSTICS v_inserted = ROW_COUNT;
        RETURN v_inserted;
    EXCEPTION WHEN unique_violation THEN
        GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
        IF v_constraint IS DISTINCT FROM 'content_items_pkey' THEN
            RAISE;
        END IF;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) FROM PUBLIC, smuves_app;
GRANT EXECUTE ON FUNCTION public.content_insert_new_page(p_portal_id bigint, p_content_type text, p_run_id bigint, p_first_id text, p_fields json, p_documents text[]) TO smuves_worker;

CREATE OR REPLACE FUNCTION public.content_types_constrain_domain() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        ALTER DOMAIN public.content_type DROP CONSTRAINT IF EXISTS content_type_known;
        EXECUTE pg_catalog.format(
            'ALTER DOMAIN public.content_type ADD CONSTRAINT content_type_known '
            'CHECK (VALUE IN (%s)) NOT VALID',
            (SELECT string_agg(pg_catalog.quote_literal(t.name), ', ' ORDER BY t.name)
             FROM public.content_types AS t));
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_types_constrain_domain() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_types_constrain_domain AFTER INSERT ON public.content_types FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_constrain_domain();

CREATE OR REPLACE FUNCTION public.content_types_only_grow() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        RAISE EXCEPTION 'content types are only ever added (% refused): rows of every type '
                        'ever listed stay valid', TG_OP
            USING ERRCODE = 'feature_not_supported';
    END
    $$;
REVOKE ALL ON FUNCTION public.content_types_only_grow() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_types_only_grow BEFORE DELETE OR UPDATE OR TRUNCATE ON public.content_types FOR EACH STATEMENT EXECUTE FUNCTION public.content_types_only_grow();

-- Retention of deleted content: up to p_limit objects of portal p_portal_id marked deleted
-- before p_cutoff are removed, each with every one of its versions (documents and all),
-- oldest deletion first. An object that a fetch is restoring right now is locked (FOR UPDATE),
-- re-checked and left alone. The versions go after the rows, once the history trigger on
-- content_items has kept what a removed row leaves (content_history_removed), so nothing of
-- the object is kept. With p_dry_run, only counts, of every such object (no limit: nothing is
-- deleted, so no batch would end). Returns how many objects and versions went (or would go),
-- a first version kept in its row counted as a version. Run by the operator's login role
-- like prune_content_versions: not SECURITY DEFINER, executable by nobody else.
CREATE OR REPLACE FUNCTION public.prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer DEFAULT 1000, p_dry_run boolean DEFAULT false) RETURNS TABLE(objects bigint, versions bigint)
    LANGUAGE plpgsql
    AS $$
    DECLARE
        v_types text[];
        v_ids text[];
    BEGIN
        IF p_dry_run THEN
            RETURN QUERY
            SELECT count(*),
                   coalesce(sum((SELECT count(*) FROM public.content_history AS v
                                 WHERE v.portal_id = p_portal_id
                                   AND v.content_type = c.content_type
                                   AND v.hubspot_id = c.hubspot_id)), 0)::bigint
            FROM public.content_items AS c
            WHERE c.portal_id = p_portal_id AND c.deleted_at < p_cutoff;
            RETURN;
        END IF;
        WITH doomed AS (
            SELECT c.content_type, c.hubspot_id FROM public.content_items AS c
            WHERE c.portal_id = p_portal_id AND c.deleted_at < p_cutoff
            ORDER BY c.deleted_at, c.content_type, c.hubspot_id
            LIMIT greatest(p_limit, 1)
            FOR UPDATE
        ),
        gone AS (
            DELETE FROM public.content_items AS c
            USING doomed AS d
            WHERE c.portal_id = p_portal_id AND c.content_type = d.content_type
              AND c.hubspot_id = d.hubspot_id
            RETURNING c.content_type::text AS content_type, c.hubspot_id
        )
        SELECT coalesce(array_agg(g.content_type), '{}'), coalesce(array_agg(g.hubspot_id), '{}')
        INTO v_types, v_ids
        FROM gone AS g;
        RETURN QUERY
        WITH versions_gone AS (
            DELETE FROM public.content_versions AS v
            USING unnest(v_types, v_ids) AS d (content_type, hubspot_id)
            WHERE v.portal_id = p_portal_id AND v.content_type = d.content_type
              AND v.hubspot_id = d.hubspot_id
            RETURNING 1
        )
        SELECT cardinality(v_ids)::bigint, (SELECT count(*) FROM versions_gone);
    END
    $$;
REVOKE ALL ON FUNCTION public.prune_deleted_content(p_portal_id bigint, p_cutoff timestamp with time zone, p_limit integer, p_dry_run boolean) FROM PUBLIC, smuves_app, smuves_worker;
