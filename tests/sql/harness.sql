-- Test harness statements (tests/support/plugin.py). {db} and {template} are identifiers filled
-- in with psycopg.sql.Identifier.

-- name: harness_create_database
CREATE DATABASE {db}

-- name: harness_clone_database
CREATE DATABASE {db} TEMPLATE {template}

-- name: harness_drop_database
DROP DATABASE IF EXISTS {db} WITH (FORCE)
