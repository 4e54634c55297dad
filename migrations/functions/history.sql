-- Content history (content_versions): the triggers that write it and its pruning.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- An inserted row begins its object's history in the row itself: version 1, recorded now
-- with a key of the changes feed (the columns' defaults), by the run whose fetch of the type
-- is in flight. content_upsert_page sets the same itself (one look-up per page, not per row),
-- so this fires only for an INSERT that leaves `version` out.
CREATE OR REPLACE FUNCTION public.content_history_begin() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        NEW.version := 1;
        NEW.first_version_run := (
            SELECT r.run_id FROM public.content_history_run(NEW.portal_id, NEW.content_type) AS r);
        RETURN NEW;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_history_begin() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_history_begin BEFORE INSERT ON public.content_items FOR EACH ROW WHEN ((new.version IS NULL)) EXECUTE FUNCTION public.content_history_begin();

-- The version p_row is in ends (p_ends: superseded now, seen until p_run) or stays current
-- without its row, keeping p_row's document when it leaves content_items (p_leaves) and no
-- version of the object holds one with its hash yet. A first version kept in its row moves
-- into content_versions, with its key in the changes feed. The number of the version back.
CREATE OR REPLACE FUNCTION public.content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_version integer;
        v_document jsonb;
    BEGIN
        IF p_leaves AND NOT EXISTS (
            SELECT FROM public.content_versions AS d
            WHERE d.portal_id = p_row.portal_id AND d.content_type = p_row.content_type
              AND d.hubspot_id = p_row.hubspot_id AND d.hash = p_row.content_hash
              AND d.document IS NOT NULL)
        THEN
            v_document := p_row.data;
        END IF;
        IF p_row.version = 1 AND p_row.first_version_id IS NOT NULL THEN
            INSERT INTO public.content_versions
                (portal_id, content_type, hubspot_id, version, event, hash, document,
                 seen_from_run, seen_until_run, recorded_at, superseded_at, id)
            OVERRIDING SYSTEM VALUE
            VALUES (p_row.portal_id, p_row.content_type, p_row.hubspot_id, 1,
                    CASE WHEN p_row.deleted_at IS NULL THEN 'created' ELSE 'deleted' END,
                    p_row.content_hash, v_document, p_row.first_version_run,
                    CASE WHEN p_ends THEN p_run END, p_row.first_version_at,
                    CASE WHEN p_ends THEN now() END, p_row.first_version_id);
            RETURN 1;
        END IF;

        UPDATE public.content_versions AS v
        SET superseded_at = CASE WHEN p_ends THEN now() END,
            seen_until_run = CASE WHEN p_ends THEN p_run END,
            document = coalesce(v.document, v_document)
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id AND v.superseded_at IS NULL
          AND v.hash IS NOT DISTINCT FROM p_row.content_hash
        RETURNING v.version INTO v_version;
        IF FOUND OR NOT p_ends THEN
            RETURN coalesce(v_version, p_row.version);
        END IF;

        -- The history does not end with the stored row: it was written while no history was
        -- kept (triggers disabled, versions removed by hand). Close whatever is open and
        -- record the stored row as a version of its own, with its document, so that nothing
        -- stored is lost and the numbering goes on.
        UPDATE public.content_versions AS v
        SET superseded_at = now(), seen_until_run = p_run
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id AND v.superseded_at IS NULL;
        SELECT greatest(coalesce(max(v.version), 0) + 1, p_row.version) INTO v_version
        FROM public.content_versions AS v
        WHERE v.portal_id = p_row.portal_id AND v.content_type = p_row.content_type
          AND v.hubspot_id = p_row.hubspot_id;
        INSERT INTO public.content_versions AS v
            (portal_id, content_type, hubspot_id, version, event, hash, document,
             seen_until_run, superseded_at)
        VALUES (p_row.portal_id, p_row.content_type, p_row.hubspot_id, v_version,
                CASE WHEN v_version = 1 THEN 'created' ELSE 'updated' END, p_row.content_hash,
                CASE WHEN p_leaves THEN p_row.data END, p_run, now());
        RETURN v_version;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_history_end(p_row public.content_items, p_run bigint, p_ends boolean, p_leaves boolean) FROM PUBLIC, smuves_app, smuves_worker;

-- What began a version, from the row before and after a change.
CREATE OR REPLACE FUNCTION public.content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
        SELECT CASE
            WHEN p_new_deleted AND NOT p_old_deleted THEN 'deleted'
            WHEN p_old_deleted AND NOT p_new_deleted THEN 'restored'
            WHEN p_new_archived AND NOT p_old_archived THEN 'archived'
            WHEN p_old_archived AND NOT p_new_archived THEN 'unarchived'
            ELSE 'updated'
        END
    $$;
REVOKE ALL ON FUNCTION public.content_history_event(p_old_archived boolean, p_old_deleted boolean, p_new_archived boolean, p_new_deleted boolean) FROM PUBLIC, smuves_app, smuves_worker;

-- The rows a statement inserted, checked against their history: a row's version is 1, of the
-- run whose fetch of the type is in flight, unless its object already has a history (a row
-- that was removed comes back): then the history goes on ('restored', or 'deleted' for a row
-- inserted marked deleted) in content_versions. A row that says otherwise (an INSERT that
-- named another number or run) is corrected. Per inserting statement (a fetched page inserts
-- up to a page of rows), a first sync costs two reads: the run's look-up and one probe of
-- content_versions_pkey per row, finding nothing; no write. The rest runs only when something
-- is to be done, its run looked up in a CTE of its own (materialized: once per portal and
-- type, never folded into a subplan per row).
CREATE OR REPLACE FUNCTION public.content_history_inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    BEGIN
        -- The common case, checked first and cheaply: new objects, numbered 1, of the run in
        -- flight (one look-up per portal, type and run named), with no history yet.
        PERFORM FROM (SELECT DISTINCT n.portal_id, n.content_type, n.first_version_run,
                             n.version = 1 AS first
                      FROM new_rows AS n) AS k
        WHERE NOT k.first
           OR k.first_version_run IS DISTINCT FROM (
                  SELECT f.run_id
                  FROM public.content_history_run(k.portal_id, k.content_type) AS f);
        IF NOT FOUND AND NOT EXISTS (
            SELECT FROM new_rows AS n
            WHERE EXISTS (SELECT FROM public.content_versions AS v
                          WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                            AND v.hubspot_id = n.hubspot_id))
        THEN
            RETURN NULL;
        END IF;
        WITH runs AS MATERIALIZED (
            SELECT k.portal_id, k.content_type,
                   (SELECT f.run_id
                    FROM public.content_history_run(k.portal_id, k.content_type) AS f) AS run_id
            FROM (SELECT DISTINCT n.portal_id, n.content_type FROM new_rows AS n) AS k
        ),
        added AS MATERIALIZED (
            SELECT n.portal_id, n.content_type, n.hubspot_id, n.content_hash,
                   n.deleted_at IS NOT NULL AS deleted, n.version, n.first_version_run,
                   r.run_id, l.version AS last_version
            FROM new_rows AS n
            JOIN runs AS r ON r.portal_id = n.portal_id AND r.content_type = n.content_type
            LEFT JOIN LATERAL (
                SELECT v.version FROM public.content_versions AS v
                WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                  AND v.hubspot_id = n.hubspot_id
                ORDER BY v.version DESC
                LIMIT 1
            ) AS l ON true
        ),
        closed AS (
            UPDATE public.content_versions AS v
            SET superseded_at = now(), seen_until_run = a.run_id
            FROM added AS a
            WHERE a.last_version IS NOT NULL
              AND v.portal_id = a.portal_id AND v.content_type = a.content_type
              AND v.hubspot_id = a.hubspot_id AND v.superseded_at IS NULL
        ),
        corrected AS (
            UPDATE public.content_items AS c
            SET version = coalesce(a.last_version + 1, 1), first_version_run = a.run_id
            FROM added AS a
            WHERE (a.version <> coalesce(a.last_version + 1, 1)
                   OR a.first_version_run IS DISTINCT FROM a.run_id)
              AND c.portal_id = a.portal_id AND c.content_type = a.content_type
              AND c.hubspot_id = a.hubspot_id
        )
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        SELECT a.portal_id, a.content_type, a.hubspot_id, a.last_version + 1,
               CASE WHEN a.deleted THEN 'deleted' ELSE 'restored' END, a.content_hash, a.run_id
        FROM added AS a
        WHERE a.last_version IS NOT NULL;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_history_inserted() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_history_inserted AFTER INSERT ON public.content_items REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_inserted();

-- A removed row (content is marked deleted, never removed, except with its portal or by the
-- retention of deleted content): its document is kept in its history, and a live object
-- gets a 'deleted' version. Rows removed with their portal are skipped: the portal's history
-- goes with it (portals_delete_content), and prune_deleted_content removes what this keeps.
CREATE OR REPLACE FUNCTION public.content_history_removed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        o public.content_items;
        v_run bigint;
        v_version integer;
    BEGIN
        FOR o IN
            SELECT r.* FROM old_rows AS r
            WHERE EXISTS (SELECT FROM public.portals AS p WHERE p.id = r.portal_id)
        LOOP
            SELECT r.run_id INTO v_run
            FROM public.content_history_run(o.portal_id, o.content_type) AS r;
            IF o.deleted_at IS NULL THEN
                v_version := public.content_history_end(o, v_run, true, true);
                INSERT INTO public.content_versions
                    (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
                VALUES (o.portal_id, o.content_type, o.hubspot_id, v_version + 1, 'deleted',
                        o.content_hash, v_run);
            ELSE
                -- Already marked deleted: its last version stays the current one, and takes
                -- the document if no version holds it.
                PERFORM public.content_history_end(o, v_run, false, true);
            END IF;
        END LOOP;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_history_removed() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER content_history_removed AFTER DELETE ON public.content_items REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_removed();

-- The run whose fetch of this portal's type is in flight (see above): no row, or one. A SQL
-- table function, so that the planner inlines it into the statements that use it (no call
-- per changed row, and the look-up is an index probe of jobs_in_flight_uniq).
CREATE OR REPLACE FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) RETURNS TABLE(run_id bigint)
    LANGUAGE sql STABLE
    AS $$
        SELECT j.run_id FROM public.jobs AS j
        WHERE j.portal_id = p_portal_id AND j.kind = 'fetch'
          AND j.content_type = p_content_type AND j.status IN ('pending', 'running')
    $$;
REVOKE ALL ON FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) FROM PUBLIC, smuves_app;
-- content_upsert_page begins a new object's history with it (under the worker's row-level
-- security of jobs, which shows the jobs of the portal it stores).
GRANT EXECUTE ON FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text) TO smuves_worker;

-- A changed object: the version it was in ends (keeping its document when the hash changes;
-- a first version kept in the row moves into content_versions), and a new one begins, whose
-- number the row takes. Fired only for rows whose hash, archived flag or deletion mark
-- changed (the trigger's WHEN), so an unchanged re-sync costs nothing here whatever it
-- rewrites. Before the row is written, so that it is written once, with its number.
CREATE OR REPLACE FUNCTION public.content_history_updated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_run bigint;
        v_version integer;
    BEGIN
        SELECT r.run_id INTO v_run
        FROM public.content_history_run(NEW.portal_id, NEW.content_type) AS r;
        v_version := public.content_history_end(
            OLD, v_run, true, OLD.content_hash IS DISTINCT FROM NEW.content_hash);
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        VALUES (NEW.portal_id, NEW.content_type, NEW.hubspot_id, v_version + 1,
                public.content_history_event(OLD.archived, OLD.deleted_at IS NOT NULL,
                                             NEW.archived, NEW.deleted_at IS NOT NULL),
                NEW.content_hash, v_run);
        NEW.version := v_version + 1;
        RETURN NEW;
    END
    $$;
REVOKE ALL ON FUNCTION public.content_history_updated() FROM PUBLIC, smuves_app, smuves_worker;

DROP TRIGGER IF EXISTS content_history_updated ON public.content_items;
CREATE TRIGGER content_history_updated BEFORE UPDATE OF content_hash, archived, deleted_at ON public.content_items FOR EACH ROW WHEN (((old.content_hash IS DISTINCT FROM new.content_hash) OR (old.archived IS DISTINCT FROM new.archived) OR ((old.deleted_at IS NULL) <> (new.deleted_at IS NULL)))) EXECUTE FUNCTION public.content_history_updated();

-- One batch of content history's retention, as before, but for the versions of an object
-- deleted before the cutoff: prune_deleted_content removes those whole, before this runs, so
-- a dry run (which deletes nothing) counts each of them once, as the real run removes it.
CREATE OR REPLACE FUNCTION public.prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone DEFAULT '-infinity'::timestamp with time zone, p_after_id bigint DEFAULT 0, p_limit integer DEFAULT 5000, p_dry_run boolean DEFAULT false) RETURNS TABLE(scanned bigint, deleted bigint, documents_moved bigint, last_recorded_at timestamp with time zone, last_id bigint)
    LANGUAGE sql
    AS $$
        WITH batch AS (
            SELECT v.content_type, v.hubspot_id, v.version, v.recorded_at, v.id,
                   coalesce(v.superseded_at < p_cutoff, false)
                   AND NOT EXISTS (
                       SELECT FROM public.content_items AS c
                       WHERE c.portal_id = p_portal_id AND c.content_type = v.content_type
                         AND c.hubspot_id = v.hubspot_id AND c.deleted_at < p_cutoff)
                       AS doomed
            FROM public.content_versions AS v
            WHERE v.portal_id = p_portal_id AND v.recorded_at < p_cutoff
              AND (v.recorded_at, v.id) > (p_after_at, p_after_id)
            ORDER BY v.recorded_at, v.id
            LIMIT greatest(p_limit, 1)
        ),
        doomed AS (
            SELECT v.content_type, v.hubspot_id, v.version, v.hash, v.document
            FROM batch AS b
            JOIN public.content_versions AS v
              ON v.portal_id = p_portal_id AND v.content_type = b.content_type
             AND v.hubspot_id = b.hubspot_id AND v.version = b.version
            WHERE b.doomed
        ),
        heirs AS (
            SELECT DISTINCT ON (d.content_type, d.hubspot_id, d.hash)
                   d.content_type, d.hubspot_id, k.version, d.document
            FROM doomed AS d
            JOIN public.content_versions AS k
              ON k.portal_id = p_portal_id AND k.content_type = d.content_type
             AND k.hubspot_id = d.hubspot_id AND k.hash = d.hash
            WHERE d.document IS NOT NULL
              AND (k.superseded_at IS NULL OR k.superseded_at >= p_cutoff)
            ORDER BY d.content_type, d.hubspot_id, d.hash, k.version
        ),
        moved AS (
            UPDATE public.content_versions AS k
            SET document = coalesce(k.document, h.document)
            FROM heirs AS h
            WHERE NOT p_dry_run
              AND k.portal_id = p_portal_id AND k.content_type = h.content_type
              AND k.hubspot_id = h.hubspot_id AND k.version = h.version
            RETURNING 1
        ),
        gone AS (
            DELETE FROM public.content_versions AS v
            USING doomed AS d
            WHERE NOT p_dry_run
              AND v.portal_id = p_portal_id AND v.content_type = d.content_type
              AND v.hubspot_id = d.hubspot_id AND v.version = d.version
            RETURNING 1
        ),
        last AS (
            SELECT b.recorded_at, b.id FROM batch AS b
            ORDER BY b.recorded_at DESC, b.id DESC
            LIMIT 1
        )
        SELECT (SELECT count(*) FROM batch),
               CASE WHEN p_dry_run THEN (SELECT count(*) FROM doomed)
                    ELSE (SELECT count(*) FROM gone) END,
               CASE WHEN p_dry_run THEN (SELECT count(*) FROM heirs)
                    ELSE (SELECT count(*) FROM moved) END,
               (SELECT l.recorded_at FROM last AS l),
               (SELECT l.id FROM last AS l)
    $$;
REVOKE ALL ON FUNCTION public.prune_content_versions(p_portal_id bigint, p_cutoff timestamp with time zone, p_after_at timestamp with time zone, p_after_id bigint, p_limit integer, p_dry_run boolean) FROM PUBLIC, smuves_app, smuves_worker;
