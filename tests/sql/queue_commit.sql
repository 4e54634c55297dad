-- tests/integration/test_queue_commit.py: how the queue's calls commit.

-- name: commit_setting
-- What the transaction's COMMIT will do: 'off', not wait for the WAL flush.
SELECT pg_catalog.current_setting('synchronous_commit') AS synchronous_commit
