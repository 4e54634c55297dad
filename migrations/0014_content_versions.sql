-- Content history: every state an object of content_items has been in, as numbered versions,
-- with what began each one (created, updated, archived, unarchived, deleted, restored).
--
-- content_versions holds one row per version of an object, the current one included. A row
-- says what began the version (event), the hash of its document, and the runs (and times) it
-- held from and until. The document itself is stored once per object and hash:
--   * the current version's document is content_items.data; its row holds none;
--   * when a document leaves content_items (the object's hash changes, or its row is removed)
--     it is written into the version it ends, unless a version of the object already holds
--     a document with that hash (an object that went back to an earlier document, or an
--     event that did not change the document: deleted, archived without a new body);
--   * so a version's document is its own `document`, else that of the object's version that
--     holds one with the same hash, else content_items.data (content_versions.sql reads it so).
-- `smuves admin prune` removes versions superseded before the retention cutoff, moving a
-- document that a kept version still needs onto it (prune_content_versions below).
--
-- The history is written by triggers on content_items, so it follows whatever statement writes
-- content (the fetch's upsert, the deletion sweep, a hand-written UPDATE), and a statement that
-- writes no row, or rewrites one without changing its hash, archived flag or deletion mark,
-- writes no version.
--
-- The run of a version is the run whose fetch of that portal and type is in flight: the
-- partial unique index jobs_in_flight_uniq (0002) allows one pending or running fetch job per
-- portal and type, and a fetch only writes while its job runs (every page and the sweep are
-- fenced by the job's lease, in the same transaction, so a page of a job that lost its lease
-- rolls back with its versions). So the run comes from no column of the statement and no
-- setting of the session: the upsert and the sweep can change shape, and be spread over as
-- many transactions as they like. A write outside any fetch (by hand, by a test) is recorded
-- with no run.

SET LOCAL ROLE smuves_owner;

CREATE DOMAIN public.content_event AS text
    CONSTRAINT content_event_known
    CHECK (VALUE IN ('created', 'updated', 'archived', 'unarchived', 'deleted', 'restored'));

CREATE TABLE public.content_versions (
    portal_id       bigint NOT NULL REFERENCES public.portals (id) ON DELETE CASCADE,
    content_type    public.content_type NOT NULL,
    hubspot_id      text NOT NULL,
    version         integer NOT NULL CONSTRAINT content_versions_version_positive CHECK (version > 0),
    -- what began this version
    event           public.content_event NOT NULL,
    -- content_items.content_hash of the document in this version
    hash            text,
    -- NULL: the document is held by another version of the object with the same hash, or, for
    -- the current version, by content_items (see above)
    document        jsonb,
    -- The runs whose fetch stored this version and replaced it: history, not references, as
    -- content_items' run columns (runs are pruned sooner than history).
    seen_from_run   bigint,
    seen_until_run  bigint,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    -- NULL while this is the object's current version
    superseded_at   timestamptz,
    -- the order in which versions were recorded: the tie-breaker of the changes feed's keyset
    id              bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (portal_id, content_type, hubspot_id, version)
);
-- The changes feed (what changed in a portal since a time or a run) and pruning walk a
-- portal's versions in the order they were recorded.
CREATE INDEX content_versions_changes_idx
    ON public.content_versions (portal_id, recorded_at, id);

-- As content_items.data (0002): lz4 where the server has it.
DO $$
BEGIN
    ALTER TABLE public.content_versions ALTER COLUMN document SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available on this server; content_versions.document stays pglz';
END
$$;

-- The run whose fetch of this portal's type is in flight (see above): no row, or one. A SQL
-- table function, so that the planner inlines it into the statements that use it (no call
-- per changed row, and the look-up is an index probe of jobs_in_flight_uniq).
CREATE FUNCTION public.content_history_run(p_portal_id bigint, p_content_type text)
    RETURNS TABLE (run_id bigint)
    LANGUAGE sql STABLE
    AS $$
        SELECT j.run_id FROM public.jobs AS j
        WHERE j.portal_id = p_portal_id AND j.kind = 'fetch'
          AND j.content_type = p_content_type AND j.status IN ('pending', 'running')
    $$;

-- Close the object's current version (seen until p_run, superseded now), keeping p_document
-- in it when the document leaves content_items (p_leaves) and no version of the object holds
-- one with its hash yet. The closed version's number back (0: the object had no history).
CREATE FUNCTION public.content_history_close(
    p_portal_id bigint,
    p_content_type text,
    p_hubspot_id text,
    p_hash text,
    p_document jsonb,
    p_leaves boolean,
    p_run bigint
)
    RETURNS integer
    LANGUAGE plpgsql
    AS $$
    DECLARE
        v_version integer;
    BEGIN
        UPDATE public.content_versions AS v
        SET superseded_at = now(),
            seen_until_run = p_run,
            document = coalesce(v.document, CASE
                WHEN p_leaves AND NOT EXISTS (
                    SELECT FROM public.content_versions AS d
                    WHERE d.portal_id = p_portal_id AND d.content_type = p_content_type
                      AND d.hubspot_id = p_hubspot_id AND d.hash = p_hash
                      AND d.document IS NOT NULL)
                THEN p_document END)
        WHERE v.portal_id = p_portal_id AND v.content_type = p_content_type
          AND v.hubspot_id = p_hubspot_id AND v.superseded_at IS NULL
          AND v.hash IS NOT DISTINCT FROM p_hash
        RETURNING v.version INTO v_version;
        IF FOUND THEN
            RETURN v_version;
        END IF;

        -- The history does not end with the stored row: it was written while no history was
        -- kept (triggers disabled, rows restored from a dump). Close whatever is open and
        -- record the stored row as a version of its own, with its document, so that nothing
        -- stored is lost and the numbering goes on.
        UPDATE public.content_versions AS v
        SET superseded_at = now(), seen_until_run = p_run
        WHERE v.portal_id = p_portal_id AND v.content_type = p_content_type
          AND v.hubspot_id = p_hubspot_id AND v.superseded_at IS NULL;
        SELECT coalesce(max(v.version), 0) + 1 INTO v_version
        FROM public.content_versions AS v
        WHERE v.portal_id = p_portal_id AND v.content_type = p_content_type
          AND v.hubspot_id = p_hubspot_id;
        INSERT INTO public.content_versions AS v
            (portal_id, content_type, hubspot_id, version, event, hash, document,
             seen_until_run, superseded_at)
        VALUES (p_portal_id, p_content_type, p_hubspot_id, v_version,
                CASE WHEN v_version = 1 THEN 'created' ELSE 'updated' END, p_hash,
                CASE WHEN p_leaves THEN p_document END, p_run, now());
        RETURN v_version;
    END
    $$;

-- What began a version, from the row before and after a change.
CREATE FUNCTION public.content_history_event(
    p_old_archived boolean,
    p_old_deleted boolean,
    p_new_archived boolean,
    p_new_deleted boolean
)
    RETURNS text
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

-- New objects: one statement per inserting statement (a fetched page inserts up to a page
-- of them), so a first sync pays one INSERT per page for its history, not one per object.
-- An object whose row was removed and comes back continues its history ('restored').
CREATE FUNCTION public.content_history_inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
        -- An upsert fires this on every page, also when every object of it was known.
        IF NOT EXISTS (SELECT FROM new_rows) THEN
            RETURN NULL;
        END IF;
        WITH added AS (
            SELECT n.portal_id, n.content_type, n.hubspot_id, n.content_hash,
                   n.deleted_at IS NOT NULL AS deleted, r.run_id,
                   (SELECT max(v.version) FROM public.content_versions AS v
                    WHERE v.portal_id = n.portal_id AND v.content_type = n.content_type
                      AND v.hubspot_id = n.hubspot_id) AS last_version
            FROM new_rows AS n
            -- one look-up per portal and type of the statement (a page has one of each)
            JOIN (SELECT k.portal_id, k.content_type,
                         (SELECT f.run_id
                          FROM public.content_history_run(k.portal_id, k.content_type) AS f)
                             AS run_id
                  FROM (SELECT DISTINCT i.portal_id, i.content_type FROM new_rows AS i) AS k
                 ) AS r
              ON r.portal_id = n.portal_id AND r.content_type = n.content_type
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

-- A changed object: the version it was in ends (keeping its document when the hash changes),
-- and a new one begins. Fired only for rows whose hash, archived flag or deletion mark changed
-- (the trigger's WHEN), so an unchanged re-sync costs nothing here whatever it rewrites.
CREATE FUNCTION public.content_history_updated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_run bigint;
        v_version integer;
    BEGIN
        SELECT r.run_id INTO v_run
        FROM public.content_history_run(NEW.portal_id, NEW.content_type) AS r;
        v_version := public.content_history_close(
            OLD.portal_id, OLD.content_type, OLD.hubspot_id, OLD.content_hash, OLD.data,
            OLD.content_hash IS DISTINCT FROM NEW.content_hash, v_run);
        INSERT INTO public.content_versions
            (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
        VALUES (NEW.portal_id, NEW.content_type, NEW.hubspot_id, v_version + 1,
                public.content_history_event(OLD.archived, OLD.deleted_at IS NOT NULL,
                                             NEW.archived, NEW.deleted_at IS NOT NULL),
                NEW.content_hash, v_run);
        RETURN NULL;
    END
    $$;

-- A removed row (content is marked deleted, never removed, except with its portal): its
-- document is kept in its history, and a live object gets a 'deleted' version. Rows removed
-- with their portal are skipped: the portal's history goes with it (ON DELETE CASCADE).
CREATE FUNCTION public.content_history_removed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        o record;
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
                v_version := public.content_history_close(
                    o.portal_id, o.content_type, o.hubspot_id, o.content_hash, o.data, true,
                    v_run);
                INSERT INTO public.content_versions
                    (portal_id, content_type, hubspot_id, version, event, hash, seen_from_run)
                VALUES (o.portal_id, o.content_type, o.hubspot_id, v_version + 1, 'deleted',
                        o.content_hash, v_run);
            ELSE
                -- Already marked deleted: its last version stays the current one, and takes
                -- the document if no version holds it.
                UPDATE public.content_versions AS v
                SET document = o.data
                WHERE v.portal_id = o.portal_id AND v.content_type = o.content_type
                  AND v.hubspot_id = o.hubspot_id AND v.superseded_at IS NULL
                  AND NOT EXISTS (
                      SELECT FROM public.content_versions AS d
                      WHERE d.portal_id = o.portal_id AND d.content_type = o.content_type
                        AND d.hubspot_id = o.hubspot_id AND d.hash = o.content_hash
                        AND d.document IS NOT NULL);
            END IF;
        END LOOP;
        RETURN NULL;
    END
    $$;

CREATE TRIGGER content_history_inserted AFTER INSERT ON public.content_items
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_inserted();
CREATE TRIGGER content_history_updated AFTER UPDATE OF content_hash, archived, deleted_at
    ON public.content_items
    FOR EACH ROW
    WHEN (OLD.content_hash IS DISTINCT FROM NEW.content_hash
          OR OLD.archived IS DISTINCT FROM NEW.archived
          OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION public.content_history_updated();
CREATE TRIGGER content_history_removed AFTER DELETE ON public.content_items
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION public.content_history_removed();

-- Content stored before history was kept: each object's state as found, as its version 1.
INSERT INTO public.content_versions
    (portal_id, content_type, hubspot_id, version, event, hash)
SELECT c.portal_id, c.content_type, c.hubspot_id, 1,
       CASE WHEN c.deleted_at IS NULL THEN 'created' ELSE 'deleted' END, c.content_hash
FROM public.content_items AS c;

-- Retention: one batch of a portal's versions recorded before p_cutoff, taken in the order
-- they were recorded after the key (p_after_at, p_after_id); of those, the versions superseded
-- before p_cutoff are deleted. A current version is never superseded, so never pruned. A
-- document held by a deleted version that a kept version of the object still needs (the same
-- hash) moves onto the oldest such version. Each batch is one short statement in the caller's
-- transaction: only its own rows are written, and a fetch storing other objects never waits.
-- Returns how many versions the batch scanned, deleted (or, with p_dry_run, would delete) and
-- how many documents moved, and the key of the last one scanned (the next batch's p_after_*;
-- fewer scanned than p_limit: the scan reached the cutoff). Run by the operator's login role
-- like prune_history (0007): not SECURITY DEFINER, executable by nobody else.
CREATE FUNCTION public.prune_content_versions(
    p_portal_id bigint,
    p_cutoff timestamptz,
    p_after_at timestamptz DEFAULT '-infinity',
    p_after_id bigint DEFAULT 0,
    p_limit integer DEFAULT 5000,
    p_dry_run boolean DEFAULT false
)
    RETURNS TABLE (scanned bigint, deleted bigint, documents_moved bigint,
                   last_recorded_at timestamptz, last_id bigint)
    LANGUAGE sql
    AS $$
        WITH batch AS (
            SELECT v.content_type, v.hubspot_id, v.version, v.recorded_at, v.id,
                   coalesce(v.superseded_at < p_cutoff, false) AS doomed
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

-- Row-level security as on content_items (0003): the app role reads its portals' history, a
-- worker its one portal's. Nobody writes it but the triggers above (owner's rights) and the
-- operator's prune.
ALTER TABLE public.content_versions ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.content_versions FORCE ROW LEVEL SECURITY;
CREATE POLICY content_versions_owner_all ON public.content_versions TO smuves_owner
    USING (true) WITH CHECK (true);
CREATE POLICY content_versions_app ON public.content_versions TO smuves_app
    USING (portal_id IN (SELECT public.member_portal_ids()))
    WITH CHECK (portal_id IN (SELECT public.member_portal_ids()));
CREATE POLICY content_versions_worker ON public.content_versions TO smuves_worker
    USING (portal_id = public.current_app_portal())
    WITH CHECK (portal_id = public.current_app_portal());
GRANT SELECT ON public.content_versions TO smuves_app, smuves_worker;
