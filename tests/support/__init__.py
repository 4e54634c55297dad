"""What the tests share. ``plugin`` is the pytest plugin (fixtures, loaded by tests/conftest.py);
the rest are helpers a test imports from here:

    from tests.support import T0, eventually, query

    sql        TEST_SQL (tests/sql/*.sql and the testing aids' SQL, loaded once) and `query`,
               the one way to run a named statement of it (`query_as`: as a login role,
               scoped to a portal or a user)
    timing     T0 (an injected "now"), `db_now`, `eventually` (poll with a deadline),
               `all_at_once` (a race of n tasks)
    commands   `smuves` in this process (`invoke`) or as a subprocess, any program (`run`)
    serving    `serve_app`: an ASGI app under uvicorn in the test's event loop; `free_port`
    sync       the sync tests' bench (`SyncBed`): the fake HubSpot, its portals and the databases;
               `fake_portal`: a portal written as the fake's `--portal` flag writes it
    claims     `claim_one_at_a_time`: the order a worker with one slot claims jobs in
    plugin     the fixtures: databases, pools, `Database`s, `factory`, `hubspot`, `sync`
"""

from tests.support.claims import claim_one_at_a_time
from tests.support.commands import (
    SECRET,
    benchmark_figures,
    clean_env,
    invoke,
    json_out,
    run,
    smuves,
    smuves_env,
)
from tests.support.serving import free_port, serve_app
from tests.support.sql import query
from tests.support.sync import TOKEN, Served, Sync, SyncBed, fake_portal
from tests.support.timing import T0, all_at_once, db_now, eventually

__all__ = [
    "SECRET",
    "T0",
    "TOKEN",
    "Served",
    "Sync",
    "SyncBed",
    "all_at_once",
    "benchmark_figures",
    "claim_one_at_a_time",
    "clean_env",
    "db_now",
    "eventually",
    "fake_portal",
    "free_port",
    "invoke",
    "json_out",
    "query",
    "run",
    "serve_app",
    "smuves",
    "smuves_env",
]
