-- Export files are found from what names an export, never from a path a runtime login wrote;
-- and what is pruned takes its files and its deleted content along.
--
-- * exports.path: the runtime roles may no longer write it. Until now both could INSERT and
--   UPDATE every column of exports, and the worker wrote its file wherever `path` said: a
--   worker login that held any lease of its own portal could point a pending export at a
--   file the next worker would overwrite (a .pth in site-packages runs as the worker's
--   user), or at another tenant's file for the API to serve. The file's place is now derived
--   from the export's portal, run, type and format (smuves_sync/export_files.py), and `path`
--   only records where an operator's `smuves export --out` copied the file, written by the
--   operator's login. Each runtime role keeps the columns it writes: the API creates an
--   export (run, portal, type, format); the worker records the written file's rows and bytes.
--   Status and finish time follow the job through exports_follow_job (owner's rights).
-- * prune_history: also returns the exports it deleted (their portal, run, type and format),
--   so that `smuves admin prune` removes their files once the delete has committed.
-- * prune_deleted_content: retention of objects deleted in HubSpot. `smuves admin prune`
--   removes the content_items rows deleted before its cutoff, with every version of them;
--   prune_content_versions leaves those objects' versions to it.

SET LOCAL ROLE smuves_owner;

REVOKE INSERT, UPDATE ON public.exports FROM smuves_app, smuves_worker;
GRANT INSERT (run_id, portal_id, content_type, format) ON public.exports TO smuves_app;
GRANT UPDATE (row_count, bytes) ON public.exports TO smuves_worker;

-- The return type changes (the exports' names are added), which CREATE OR REPLACE cannot do.
DROP FUNCTION public.prune_history(interval, boolean, timestamptz);

-- Delete history older than p_older_than: settled runs that finished before the cutoff, with
-- their jobs, exports and notifications, and any notification created before the cutoff.
-- Open runs and their jobs are never touched. Returns how many rows of each table went (or,
-- with p_dry_run, would go), and in export_files the exports that went (a JSON array of
-- {portal_id, run_id, content_type, format}): their files are the caller's to remove, after
-- this transaction commits.
CREATE FUNCTION public.prune_history(
    p_older_than interval,
    p_dry_run boolean DEFAULT false,
    p_now timestamptz DEFAULT NULL
)
    RETURNS TABLE (runs bigint, jobs bigint, exports bigint, notifications bigint,
                   export_files jsonb)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
        v_cutoff timestamptz;
        v_run_ids bigint[];
        v_runs bigint;
        v_jobs bigint;
        v_exports bigint;
        v_files jsonb;
        v_notifications bigint;
    BEGIN
        IF p_older_than IS NULL OR p_older_than <= interval '0' THEN
            RAISE EXCEPTION 'prune_history: the age must be positive, got %', p_older_than
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        v_cutoff := coalesce(p_now, now()) - p_older_than;

        -- FOR UPDATE re-checks the status of a run that a requeue is reopening right now.
        SELECT coalesce(array_agg(s.id), '{}') INTO v_run_ids FROM (
            SELECT r.id FROM public.runs AS r
            WHERE r.status NOT IN ('pending', 'running')
              AND coalesce(r.finished_at, r.created_at) < v_cutoff
            ORDER BY r.id
            FOR UPDATE
        ) AS s;

        IF p_dry_run THEN
            SELECT count(*) INTO v_notifications FROM public.notifications AS n
            WHERE n.run_id = ANY (v_run_ids) OR n.created_at < v_cutoff;
            SELECT count(*),
                   coalesce(jsonb_agg(jsonb_build_object(
                       'portal_id', e.portal_id, 'run_id', e.run_id,
                       'content_type', e.content_type, 'format', e.format) ORDER BY e.id),
                       '[]')
            INTO v_exports, v_files
            FROM public.exports AS e WHERE e.run_id = ANY (v_run_ids);
            SELECT count(*) INTO v_jobs FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            v_runs := cardinality(v_run_ids);
        ELSE
            DELETE FROM public.notifications AS n
            WHERE n.run_id = ANY (v_run_ids) OR n.created_at < v_cutoff;
            GET DIAGNOSTICS v_notifications = ROW_COUNT;
            WITH gone AS (
                DELETE FROM public.exports AS e WHERE e.run_id = ANY (v_run_ids)
                RETURNING e.id, e.portal_id, e.run_id, e.content_type, e.format
            )
            SELECT count(*),
                   coalesce(jsonb_agg(jsonb_build_object(
                       'portal_id', g.portal_id, 'run_id', g.run_id,
                       'content_type', g.content_type, 'format', g.format) ORDER BY g.id),
                       '[]')
            INTO v_exports, v_files
            FROM gone AS g;
            DELETE FROM public.jobs AS j WHERE j.run_id = ANY (v_run_ids);
            GET DIAGNOSTICS v_jobs = ROW_COUNT;
            DELETE FROM public.runs AS r WHERE r.id = ANY (v_run_ids);
            GET DIAGNOSTICS v_runs = ROW_COUNT;
        END IF;
        RETURN QUERY SELECT v_runs, v_jobs, v_exports, v_notifications, v_files;
    END
    $$;

-- The objects deleted in HubSpot, by portal and time: what their retention looks for. Few
-- rows (only deleted ones), so the fetch's writes of live objects do not pay for it.
CREATE INDEX content_items_deleted_idx ON public.content_items (portal_id, deleted_at)
    WHERE deleted_at IS NOT NULL;

-- Retention of deleted content: up to p_limit objects of portal p_portal_id marked deleted
-- before p_cutoff are removed, each with every one of its versions (documents and all),
-- oldest deletion first. An object that a fetch is restoring right now is locked (FOR UPDATE),
-- re-checked and left alone. The versions go in the same statement as the rows, before the
-- history trigger on content_items runs, so nothing of the object is kept. With p_dry_run,
-- only counts, of every such object (no limit: nothing is deleted, so no batch would end).
-- Returns how many objects and versions went (or would go). Run by the operator's login
-- role like prune_content_versions: not SECURITY DEFINER, executable by nobody else.
CREATE FUNCTION public.prune_deleted_content(
    p_portal_id bigint,
    p_cutoff timestamptz,
    p_limit integer DEFAULT 1000,
    p_dry_run boolean DEFAULT false
)
    RETURNS TABLE (objects bigint, versions bigint)
    LANGUAGE sql
    AS $$
        WITH doomed AS (
            SELECT c.content_type, c.hubspot_id FROM public.content_items AS c
            WHERE c.portal_id = p_portal_id AND c.deleted_at < p_cutoff
            ORDER BY c.deleted_at, c.content_type, c.hubspot_id
            LIMIT CASE WHEN p_dry_run THEN NULL ELSE greatest(p_limit, 1) END
            FOR UPDATE
        ),
        versions_gone AS (
            DELETE FROM public.content_versions AS v
            USING doomed AS d
            WHERE NOT p_dry_run
              AND v.portal_id = p_portal_id AND v.content_type = d.content_type
              AND v.hubspot_id = d.hubspot_id
            RETURNING 1
        ),
        objects_gone AS (
            DELETE FROM public.content_items AS c
            USING doomed AS d
            WHERE NOT p_dry_run
              AND c.portal_id = p_portal_id AND c.content_type = d.content_type
              AND c.hubspot_id = d.hubspot_id
            RETURNING 1
        )
        SELECT CASE WHEN p_dry_run THEN (SELECT count(*) FROM doomed)
                    ELSE (SELECT count(*) FROM objects_gone) END,
               CASE WHEN p_dry_run
                    THEN (SELECT count(*) FROM public.content_versions AS v
                          JOIN doomed AS d
                            ON v.portal_id = p_portal_id AND v.content_type = d.content_type
                           AND v.hubspot_id = d.hubspot_id)
                    ELSE (SELECT count(*) FROM versions_gone) END
    $$;

-- One batch of content history's retention, as before, but for the versions of an object
-- deleted before the cutoff: prune_deleted_content removes those whole, before this runs, so
-- a dry run (which deletes nothing) counts each of them once, as the real run removes it.
CREATE OR REPLACE FUNCTION public.prune_content_versions(
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
