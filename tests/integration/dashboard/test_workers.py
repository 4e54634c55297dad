"""The overview lists the workers, alive and dead; a run whose jobs wait with no live worker
says so on its page and on the overview."""

from __future__ import annotations

from datetime import timedelta

import httpx

from smuves_sync.db import Database
from smuves_sync.db.workers import NO_WORKER, WorkerSeat, worker_heartbeat, worker_register
from smuves_sync.models import JobKind, RunStatus
from tests.integration.dashboard.test_pages import rows_of
from tests.support import db_now
from tests.support.factories import Factory


def seat(name: str, kinds: tuple[JobKind, ...] = (JobKind.FETCH,)) -> WorkerSeat:
    host, _, pid = name.partition(":")
    return WorkerSeat(
        name=name,
        host=host,
        pid=int(pid),
        kinds=kinds,
        concurrency=3,
        heartbeat_every=timedelta(seconds=20),
    )


async def test_the_overview_lists_workers_alive_and_dead(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database
) -> None:
    gone = await worker_register(db, seat("old-box:41"), now=await db_now(db) - timedelta(hours=2))
    live = await worker_register(db, seat("new-box:42", (JobKind.FETCH, JobKind.EXPORT)))
    await worker_heartbeat(db, live, job_ids=[9, 8])

    html = (await dashboard.get("/")).text

    [first, second] = rows_of(html, "stack workers")
    assert f'id="worker-{live.id}" data-alive="yes"' in first
    assert "new-box:42" in first and "export, fetch" in first and "2: 8, 9" in first
    assert "alive" in first
    assert f'id="worker-{gone.id}" data-alive="no"' in second
    assert "old-box:41" in second and ">41<" in second and "dead" in second
    assert ">2 h" in second  # last seen
    assert "1 of 2 worker(s) alive" in html
    assert "No worker is running" not in html


async def test_with_no_live_worker_the_overview_and_the_run_page_say_so(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run)
    await worker_register(db, seat("old-box:41"), now=await db_now(db) - timedelta(hours=2))

    overview = (await dashboard.get("/")).text
    page = (await dashboard.get(f"/runs/{run.id}")).text
    listed = (await dashboard.get("/runs")).text

    assert NO_WORKER in listed
    assert "No worker is running (start one with <code>smuves worker</code>)" in overview
    card = overview[overview.index(f"Run {run.id}</a>") :]
    assert NO_WORKER in card
    assert NO_WORKER in page

    await worker_register(db, seat("new-box:42"))
    overview = (await dashboard.get("/")).text
    page = (await dashboard.get(f"/runs/{run.id}")).text
    listed = (await dashboard.get("/runs")).text
    assert "No worker is running" not in overview
    assert "waiting: no worker is running" not in listed
    assert "waiting: no worker is running" not in overview
    assert "waiting: no worker is running" not in page
