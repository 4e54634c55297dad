-- Storing a fetched page for less (scripts/bench_sync.py --only ingest): what a page of new
-- objects costs beyond parsing its documents, without changing what is stored or recorded.
--
-- * The portal of content_items and content_versions is checked once per statement, not once
--   per row. Their foreign keys to portals (0002, 0014) ran a look-up and a KEY SHARE lock
--   of the portal's row for every object a page stored, and again for every version its
--   history wrote: two hundred queries a page for one row that is the same for all of them.
--   The same integrity, kept by triggers instead:
--     - a statement inserting content rows checks, once, that their portals exist, and
--       locks them FOR KEY SHARE as the foreign key did (a portal being deleted is waited
--       for, and then refused): content_items_portal_exists;
--     - a row moved to another portal is checked the same way (nothing moves rows; a hand
--       may): content_items_portal_moved, a row trigger on the same function;
--     - a deleted portal takes its content and its history with it, as ON DELETE CASCADE
--       did: portals_delete_content;
--     - content_versions is written only by the triggers on content_items (0014), from rows
--       whose portal is checked above, and by the operator's prune, which deletes versions
--       and moves documents among an object's own.
-- * The history of new objects (content_history_inserted, 0014) looks up the run in flight
--   once per portal and type of the statement, as its comment always said, instead of once
--   per object (the planner had made it a subplan per row).

SET LOCAL ROLE smuves_owner;

ALTER TABLE public.content_items DROP CONSTRAINT content_items_portal_id_fkey;
ALTER TABLE public.content_versions DROP CONSTRAINT content_versions_portal_id_fkey;

-- The portals p_ids (distinct) exist, and stay locked FOR KEY SHARE until the transaction
-- ends, as a foreign key's check leaves them: a portal being deleted is waited for, and then
-- refused; none is deleted under the rows that name it. A foreign key's error otherwise.
CREATE FUNCTION public.content_portals_lock(p_ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
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
REVOKE EXECUTE ON FUNCTION public.content_portals_lock(bigint[]) FROM PUBLIC;

-- The rows a statement inserted (a statement trigger), or a row moved to another portal (a
-- row trigger, fired only when portal_id changes).
CREATE FUNCTION public.content_items_portal_exists() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
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

-- What ON DELETE CASCADE did for the two tables. content_history_removed (0014) skips the
-- rows of a portal that is gone: its history goes with it, here.
CREATE FUNCTION public.portals_delete_content() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        DELETE FROM public.content_items AS c
        WHERE c.portal_id IN (SELECT o.id FROM old_portals AS o);
        DELETE FROM public.content_versions AS v
        WHERE v.portal_id IN (SELECT o.id FROM old_portals AS o);
        RETURN NULL;
    END
    $$;

CREATE TRIGGER content_items_portal_exists AFTER INSERT ON public.content_items
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION public.content_items_portal_exists();
CREATE TRIGGER content_items_portal_moved AFTER UPDATE OF portal_id ON public.content_items
    FOR EACH ROW
    WHEN (OLD.portal_id IS DISTINCT FROM NEW.portal_id)
    EXECUTE FUNCTION public.content_items_portal_exists();
CREATE TRIGGER portals_delete_content AFTER DELETE ON public.portals
    REFERENCING OLD TABLE AS old_portals
    FOR EACH STATEMENT EXECUTE FUNCTION public.portals_delete_content();

-- As in 0014, but the run is looked up in a CTE of its own (materialized: evaluated once per
-- portal and type, never folded back into a subplan per row).
CREATE OR REPLACE FUNCTION public.content_history_inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        -- An upsert fires this on every page, also when every object of it was known.
        IF NOT EXISTS (SELECT FROM new_rows) THEN
            RETURN NULL;
        END IF;
        WITH runs AS MATERIALIZED (
            SELECT k.portal_id, k.content_type,
                   (SELECT f.run_id
                    FROM public.content_history_run(k.portal_id, k.content_type) AS f) AS run_id
            FROM (SELECT DISTINCT i.portal_id, i.content_type FROM new_rows AS i) AS k
        ),
        added AS (
            SELECT n.portal_id, n.content_type, n.hubspot_id, n.content_hash,
                   n.deleted_at IS NOT NULL AS deleted, r.run_id,
                   (SELECT max(v.version) FROM public.content_versions AS v
                    WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                      AND v.hubspot_id = n.hubspot_id) AS last_version
            FROM new_rows AS n
            JOIN runs AS r ON r.portal_id = n.portal_id AND r.content_type = n.content_type
        ),
        closed AS (
            UPDATE public.content_versions AS v
            SET superseded_at = now(), seen_until_run = a.run_id
            FROM added AS a
            WHERE a.last_version IS NOT NULL
              AND v.portal_id = a.portal_id AND v.content_type = a.content_type
              AND v.hubspot_id = a.hubspot_id AND v.superseded_at IS NULL
        )
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        SELECT a.portal_id, a.content_type, a.hubspot_id, coalesce(a.last_version, 0) + 1,
               CASE WHEN a.deleted THEN 'deleted'
                    WHEN a.last_version IS NULL THEN 'created'
                    ELSE 'restored' END,
               a.content_hash, a.run_id
        FROM added AS a;
        RETURN NULL;
    END
    $$;
