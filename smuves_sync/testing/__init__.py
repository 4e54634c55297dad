"""Aids for testing and benchmarking smuves-sync; the product never imports this package.

    smuves_sync.testing.fake_hubspot     a fake HubSpot CMS API (a real HTTP server): generated
                                         portals, HubSpot's limits, injected faults, ground truth
    smuves_sync.testing.scratch          throw-away migrated databases (on a given server or an
                                         embedded one) and a seeded job backlog
    smuves_sync.testing.worker_processes `smuves worker` processes logged in as
                                         smuves_worker_login, watched for exits and stalls
    smuves_sync.testing.ingest_baseline  the naive page stores the ingest benchmark compares with
    smuves_sync.testing.queue_loops      the queue benchmark's worker loops, today's and fifo
    smuves_sync.testing.queue_peers      the queue against pgqueuer, workers in processes
    smuves_sync.testing.queries          the named SQL of these aids (smuves_sync/testing/sql/)

Importing this package imports none of them: each is loaded when it is named.
"""
