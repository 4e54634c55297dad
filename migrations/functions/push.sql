-- Pushing changesets: starting a push, the changeset following its push jobs, the changeset a
-- push job works (for the policies in functions/security.sql), the versions a push produced.
--
-- Re-applied whole by the migration runner whenever this file changes (see
-- smuves_sync/db/migrations.py): every statement here must be safe to run again.

SET LOCAL ROLE smuves_owner;

-- The changeset whose push the job in app.job_id works, while this transaction holds that
-- job's live lease (worker_holds_lease); NULL otherwise. A push job's run is its changeset's
-- (changesets.run_id), so a worker reads and settles the items of that changeset only.
CREATE OR REPLACE FUNCTION public.push_job_changeset() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        IF NOT public.worker_holds_lease() THEN
            RETURN NULL;
        END IF;
        SELECT c.id INTO v_id
        FROM public.jobs AS j
        JOIN public.changesets AS c ON c.run_id = j.run_id AND c.portal_id = j.portal_id
        WHERE j.id = nullif(current_setting('app.job_id', true), '')::bigint
          AND j.kind = 'push';
        RETURN v_id;
    END
    $$;
REVOKE ALL ON FUNCTION public.push_job_changeset() FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.push_job_changeset() TO smuves_worker;

-- Mark a push's run on its changeset and set it pushing: for an owner or editor of the
-- changeset's portal (a viewer is refused) or the operator's login. Returns the status the
-- changeset had: 'pushing' means another push holds it, and nothing was changed.
CREATE OR REPLACE FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) RETURNS text
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_changeset public.changesets;
        v_run public.runs;
    BEGIN
        SELECT * INTO v_changeset FROM public.changesets AS c WHERE c.id = p_changeset_id
        FOR UPDATE;
        IF NOT FOUND OR NOT (public.operator_session()
                             OR v_changeset.portal_id IN (SELECT public.member_portal_ids())) THEN
            RETURN NULL;
        END IF;
        IF NOT public.operator_session()
           AND v_changeset.portal_id NOT IN (SELECT public.editor_portal_ids()) THEN
            RAISE EXCEPTION 'changeset_push_begin: only the owners and editors of portal % may '
                            'push its changesets; a viewer may only read', v_changeset.portal_id
                USING ERRCODE = 'insufficient_privilege', CONSTRAINT = 'portal_app_editor';
        END IF;
        SELECT * INTO v_run FROM public.runs AS r WHERE r.id = p_run_id;
        IF NOT FOUND OR v_run.kind <> 'push' OR v_run.portal_id <> v_changeset.portal_id THEN
            RAISE EXCEPTION 'changeset_push_begin: run % is no push of portal %',
                            p_run_id, v_changeset.portal_id
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF v_changeset.status = 'pushing' THEN
            RETURN v_changeset.status;
        END IF;
        UPDATE public.changesets AS c
        SET status = 'pushing', run_id = p_run_id, publish = p_publish
        WHERE c.id = p_changeset_id;
        RETURN v_changeset.status;
    END
    $$;
REVOKE ALL ON FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.changeset_push_begin(p_changeset_id bigint, p_run_id bigint, p_publish text) TO smuves_app;

-- A changeset follows its push: when the last push job of its run ends, it is `pushed` (every
-- job completed) or `draft` again (one failed or was stopped: its pending items can be pushed
-- once more). The changeset row is locked first, so that of two jobs ending at once the later
-- sees the earlier's end.
CREATE OR REPLACE FUNCTION public.changesets_follow_push() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_id bigint;
    BEGIN
        SELECT c.id INTO v_id FROM public.changesets AS c
        WHERE c.run_id = NEW.run_id AND c.portal_id = NEW.portal_id AND c.status = 'pushing'
        FOR UPDATE;
        IF NOT FOUND OR EXISTS (SELECT FROM public.jobs AS j
                                WHERE j.run_id = NEW.run_id AND j.id <> NEW.id
                                  AND j.status IN ('pending', 'running')) THEN
            RETURN NULL;
        END IF;
        UPDATE public.changesets AS c
        SET status = CASE WHEN EXISTS (SELECT FROM public.jobs AS j
                                       WHERE j.run_id = NEW.run_id
                                         AND j.status <> 'completed')
                          THEN 'draft' ELSE 'pushed' END,
            pushed_at = now()
        WHERE c.id = v_id;
        RETURN NULL;
    END
    $$;
REVOKE ALL ON FUNCTION public.changesets_follow_push() FROM PUBLIC, smuves_app, smuves_worker;

CREATE OR REPLACE TRIGGER jobs_changesets_follow AFTER UPDATE OF status ON public.jobs FOR EACH ROW WHEN ((((new.kind)::text = 'push'::text) AND ((old.status)::text IS DISTINCT FROM (new.status)::text) AND ((new.status)::text = ANY (ARRAY['completed'::text, 'failed'::text, 'stopped'::text])))) EXECUTE FUNCTION public.changesets_follow_push();

-- The versions a push stored (the ordinary upsert's, by content_history_updated) marked as
-- made by the job's changeset: each object's newest version, and its number. Only under the
-- live lease of a push job of that changeset (push_job_changeset).
CREATE OR REPLACE FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) RETURNS TABLE(hubspot_id text, version integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    DECLARE
        v_changeset bigint := public.push_job_changeset();
        v_portal bigint := public.current_app_portal();
    BEGIN
        IF v_changeset IS NULL THEN
            RAISE EXCEPTION 'push_versions_attribute: no live lease of a push job'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN QUERY
        WITH newest AS (
            -- An object's current version number is its row's (content_history_begin keeps
            -- it); a version past the first also stands in content_versions, to be marked.
            SELECT c.hubspot_id, c.version
            FROM public.content_items AS c
            WHERE c.portal_id = v_portal AND c.content_type = p_content_type
              AND c.hubspot_id = ANY (p_hubspot_ids)
        ), marked AS (
            UPDATE public.content_versions AS v
            SET changeset_id = v_changeset
            FROM newest AS n
            WHERE v.portal_id = v_portal AND v.content_type = p_content_type
              AND v.hubspot_id = n.hubspot_id AND v.version = n.version
              AND v.changeset_id IS NULL
            RETURNING v.hubspot_id
        )
        -- marked runs whether or not it is read (a data-modifying WITH always does).
        SELECT n.hubspot_id, n.version FROM newest AS n;
    END
    $$;
REVOKE ALL ON FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) FROM PUBLIC, smuves_app, smuves_worker;
GRANT EXECUTE ON FUNCTION public.push_versions_attribute(p_content_type text, p_hubspot_ids text[]) TO smuves_worker;
