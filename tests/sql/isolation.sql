-- Catalog reads of the isolation tests: what exists is read from the catalog, so a new
-- table or function is checked without anyone remembering to add it to a list.

-- name: catalog_tables
SELECT c.relname AS name, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
       array(SELECT a.attname::text FROM pg_catalog.pg_attribute AS a
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
ORDER BY c.relname

-- name: catalog_security_definer_functions
SELECT p.oid::regprocedure::text AS signature,
       coalesce(p.proconfig, '{}') AS config,
       EXISTS (SELECT FROM pg_catalog.aclexplode(
                   coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) AS acl
               WHERE acl.grantee = 0 AND acl.privilege_type = 'EXECUTE') AS public_can_execute
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.prosecdef
ORDER BY 1

-- name: catalog_functions_public_may_execute
SELECT p.oid::regprocedure::text AS signature
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = 'public'
  AND EXISTS (SELECT FROM pg_catalog.aclexplode(
                  coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) AS acl
              WHERE acl.grantee = 0 AND acl.privilege_type = 'EXECUTE')
ORDER BY 1

-- name: catalog_objects_not_owned_by_smuves_owner
SELECT 'relation ' || c.relname AS object FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND pg_catalog.pg_get_userbyid(c.relowner) <> 'smuves_owner'
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND pg_catalog.pg_get_userbyid(p.proowner) <> 'smuves_owner'
UNION ALL
SELECT 'type ' || t.typname FROM pg_catalog.pg_type AS t
JOIN pg_catalog.pg_namespace AS n ON n.oid = t.typnamespace
WHERE n.nspname = 'public' AND pg_catalog.pg_get_userbyid(t.typowner) <> 'smuves_owner'

-- name: catalog_readable_columns
SELECT a.attname::text AS name FROM pg_catalog.pg_attribute AS a
WHERE a.attrelid = pg_catalog.to_regclass('public.' || %(table)s)
  AND a.attnum > 0 AND NOT a.attisdropped
  AND pg_catalog.has_column_privilege(%(role)s, a.attrelid, a.attnum, 'SELECT')
ORDER BY a.attnum

-- name: isolation_select_columns
SELECT {columns} FROM public.{table}
