"""What the portal's users are told of a failure: its kind and what to do, never the error's
own text, which may name the service's hosts, ports, statements or files (the operators keep
that, in jobs.last_error and the logs)."""

from __future__ import annotations

import httpx

from smuves_sync.db import Database, Pool
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.settings import Settings
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.runner import Runner
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory

LEAK = 'connection to server at "db-primary.internal" (10.0.4.17), port 5432 failed'


async def test_a_failure_over_the_api_names_nothing_of_the_machinery(
    client: httpx.AsyncClient,
    factory: Factory,
    db: Database,
    worker_db: Database,
    settings: Settings,
    admin_pool: Pool,
    alice: User,
) -> None:
    portal = await factory.portal(alice.id)
    started = await start_fetch(
        db, portal, [ContentType.SITE_PAGE], owner_id=alice.id, max_attempts=1
    )

    async def handler(ctx: JobContext) -> None:
        raise ConnectionRefusedError(LEAK)

    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=1,
        burst=True,
        handlers={JobKind.FETCH: handler},
    )
    await runner.run()

    run = await client.get(f"/v1/runs/{started.run.id}", headers=alice.headers)
    [job] = run.json()["jobs"]
    assert job["status"] == "failed"
    assert job["last_error"].startswith("ConnectionRefusedError: the fetch failed inside")
    notes = await client.get("/v1/notifications", headers=alice.headers)
    told = [n["message"] for n in notes.json()["items"]]
    assert any("failed inside this service" in message for message in told)
    for answer in (run.text, notes.text):
        # "port 5432", not "5432": a timestamp's microseconds may hold those digits.
        for secret in ("db-primary", "10.0.4.17", "port 5432"):
            assert secret not in answer
    # The operators have it all.
    [stored] = await query(admin_pool, "check_jobs_of_run_errors", run_id=started.run.id)
    assert LEAK in stored["last_error"]
