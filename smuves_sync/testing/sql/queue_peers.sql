-- scripts/bench_queue.py --peers (smuves_sync/testing/queue_peers.py): the peer's backlog, in a
-- scratch database of its own.

-- name: peer_analyze
ANALYZE pgqueuer
