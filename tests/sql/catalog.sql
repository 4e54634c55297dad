-- Catalog and ledger reads used by the tests.

-- name: catalog_public_tables
SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = 'public' ORDER BY tablename

-- name: catalog_migration_ledger
SELECT version, name, checksum, applied_at FROM public.schema_migrations ORDER BY version

-- name: catalog_functions_ledger
SELECT file, checksum FROM public.schema_functions ORDER BY file

-- name: catalog_function_exists
SELECT pg_catalog.to_regproc(%(name)s) IS NOT NULL AS found
