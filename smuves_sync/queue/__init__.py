"""The Postgres job queue: thin Python over the SQL functions."""
