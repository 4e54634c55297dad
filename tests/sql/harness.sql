-- Test harness statements (tests/support/plugin.py). Creating and dropping a database are the
-- testing aids' own statements (smuves_sync/testing/sql/scratch.sql: database_create,
-- database_drop). {db} and {template} are identifiers filled in with psycopg.sql.Identifier.

-- name: harness_clone_database
CREATE DATABASE {db} TEMPLATE {template}
