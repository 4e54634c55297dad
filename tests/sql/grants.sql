-- What the runtime roles may do, read from the catalog (tests/integration/test_runtime_grants.py),
-- and what they must not do, tried through their own logins.

-- name: grants_of_role
-- Every privilege %(role)s has on an object of schema public, PUBLIC's and its memberships'
-- included: one line per table privilege ("SELECT ON runs"), per column privilege of a table
-- it does not hold whole ("SELECT (id, name) ON portals", columns in table order), per
-- sequence privilege and per function it may execute.
WITH relations AS (
    SELECT c.oid, c.relname, c.relkind FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
), granted AS (
    SELECT p.privilege || ' ON ' || t.relname AS line
    FROM relations AS t
    CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES',
                            'TRIGGER']) AS p (privilege)
    WHERE pg_catalog.has_table_privilege(%(role)s, t.oid, p.privilege)
    UNION ALL
    SELECT p.privilege || ' (' || string_agg(a.attname::text, ', ' ORDER BY a.attnum) || ') ON '
           || t.relname
    FROM relations AS t
    JOIN pg_catalog.pg_attribute AS a
      ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
    CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) AS p (privilege)
    WHERE pg_catalog.has_column_privilege(%(role)s, t.oid, a.attnum, p.privilege)
      AND NOT pg_catalog.has_table_privilege(%(role)s, t.oid, p.privilege)
    GROUP BY t.relname, p.privilege
    UNION ALL
    SELECT p.privilege || ' ON SEQUENCE ' || c.relname
    FROM pg_catalog.pg_class AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    CROSS JOIN unnest(ARRAY['USAGE', 'SELECT', 'UPDATE']) AS p (privilege)
    WHERE n.nspname = 'public' AND c.relkind = 'S'
      AND pg_catalog.has_sequence_privilege(%(role)s, c.oid, p.privilege)
    UNION ALL
    SELECT 'EXECUTE ON FUNCTION ' || f.oid::regprocedure::text
    FROM pg_catalog.pg_proc AS f
    JOIN pg_catalog.pg_namespace AS n ON n.oid = f.pronamespace
    WHERE n.nspname = 'public' AND pg_catalog.has_function_privilege(%(role)s, f.oid, 'EXECUTE')
)
SELECT line FROM granted ORDER BY line COLLATE "C"

-- name: grants_set_user
SELECT pg_catalog.set_config('app.user_id', %(user_id)s::text, true)

-- name: grants_set_portal
SELECT pg_catalog.set_config('app.portal_id', %(portal_id)s::text, true)

-- name: grants_member_portals
SELECT public.member_portal_ids() AS portal_id

-- name: grants_portal_owners
SELECT id, owner_id FROM public.portals

-- name: grants_portal_ids
SELECT id FROM public.portals

-- name: grants_job_errors
SELECT id, last_error FROM public.jobs

-- name: grants_job_lockers
SELECT id, locked_by FROM public.jobs

-- name: grants_job_notes
SELECT id, last_error_public FROM public.jobs

-- name: grants_add_schedule
INSERT INTO public.schedules (portal_id, cron_expression, content_types, next_run_at)
VALUES (%(portal_id)s, '* * * * *', ARRAY['site_page']::public.content_type[], now())

-- name: grants_enable_schedules
UPDATE public.schedules SET enabled = true, next_run_at = now() WHERE portal_id = %(portal_id)s

-- name: grants_create_finished_run
-- A run the API never makes: born completed.
INSERT INTO public.runs (portal_id, kind, status, content_types, started_at, finished_at)
VALUES (%(portal_id)s, 'fetch', 'completed', ARRAY['site_page']::public.content_type[], now(),
        now())

-- name: grants_finish_runs
UPDATE public.runs SET status = 'completed', finished_at = now() WHERE portal_id = %(portal_id)s
