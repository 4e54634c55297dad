"""Workers register, heartbeat and unregister their own row only, through the workers' login;
dead after three missed heartbeats (time injected); `smuves stats` lists them, and a run whose
jobs wait with no live worker says so in `smuves run` / `smuves runs` / `smuves sync --no-wait`.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta
from typing import Any

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.workers import (
    NO_WORKER,
    WorkerPass,
    WorkerRow,
    WorkerSeat,
    metrics_workers_live,
    run_waiting_for_worker,
    worker_heartbeat,
    worker_list,
    worker_register,
    worker_unregister,
)
from smuves_sync.errors import DatabaseError, DatabaseRefused
from smuves_sync.models import JobKind, JobStatus, RunStatus
from smuves_sync.settings import Settings
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.runner import Runner
from tests.support import SECRET, T0, db_now, invoke, json_out
from tests.support.factories import Factory
from tests.support.logins import runtime_env


def seat(name: str = "host-a:101", *, every: float = 10, **changes: Any) -> WorkerSeat:
    host, _, pid = name.partition(":")
    plain = WorkerSeat(
        name=name,
        host=host,
        pid=int(pid),
        kinds=(JobKind.FETCH,),
        concurrency=4,
        heartbeat_every=timedelta(seconds=every),
    )
    return dataclasses.replace(plain, **changes)


async def test_a_worker_login_registers_heartbeats_and_unregisters_its_row(
    worker_login_pool: Pool, db: Database
) -> None:
    worker = Database(worker_login_pool)
    kinds = (JobKind.EXPORT, JobKind.FETCH)  # stored sorted
    mine = await worker_register(worker, seat(kinds=kinds, concurrency=3))
    [registered] = await worker_list(db)
    beat = await worker_heartbeat(worker, mine, job_ids=[12, 7])
    [seen] = await worker_list(db)
    gone = await worker_unregister(worker, mine)

    assert (registered.id, registered.name, registered.host, registered.pid) == (
        mine.id,
        "host-a:101",
        "host-a",
        101,
    )
    assert (registered.kinds, registered.concurrency, registered.job_ids) == (kinds, 3, ())
    assert registered.alive and registered.started_at == registered.last_seen_at
    assert beat and seen.job_ids == (7, 12) and seen.last_seen_at >= registered.last_seen_at
    assert gone and await worker_list(db) == []
    assert str(mine.token) not in repr(mine)


async def test_a_worker_cannot_touch_another_workers_row(
    worker_login_pool: Pool, db: Database
) -> None:
    worker = Database(worker_login_pool)
    theirs = await worker_register(worker, seat("host-b:202"))
    mine = await worker_register(worker, seat("host-a:101"))
    before = {w.id: w for w in await worker_list(db)}

    forged = WorkerPass(theirs.id, mine.token)
    guessed = WorkerPass(theirs.id, uuid.uuid4())
    outcomes = [
        await worker_heartbeat(worker, forged, job_ids=[1]),
        await worker_heartbeat(worker, guessed, job_ids=[1]),
        await worker_unregister(worker, forged),
        await worker_unregister(worker, guessed),
    ]

    assert outcomes == [False, False, False, False]
    assert {w.id: w for w in await worker_list(db)} == before
    # Nor may it read or write the table itself, nor pass a time of its choosing.
    with pytest.raises(DatabaseRefused):
        await worker_list(worker)
    with pytest.raises(DatabaseRefused, match="only the operator"):
        await worker_heartbeat(worker, mine, job_ids=[], now=T0)


async def test_a_worker_is_dead_after_three_missed_heartbeats_and_forgotten_after_a_day(
    db: Database,
) -> None:
    old = await worker_register(db, seat("host-a:101", every=10), now=T0)

    async def alive_at(seconds: float) -> list[WorkerRow]:
        return await worker_list(db, now=T0 + timedelta(seconds=seconds))

    [at_29] = await alive_at(29)
    [at_31] = await alive_at(31)
    await worker_heartbeat(db, old, job_ids=[], now=T0 + timedelta(seconds=40))
    [after_beat] = await alive_at(60)
    live_then = await metrics_workers_live(db, now=T0 + timedelta(seconds=60))
    live_later = await metrics_workers_live(db, now=T0 + timedelta(seconds=71))

    assert (at_29.alive, at_31.alive, after_beat.alive) == (True, False, True)
    assert (live_then, live_later) == (1, 0)
    new = await worker_register(db, seat("host-b:202"), now=T0 + timedelta(days=1, minutes=1))
    assert [w.id for w in await worker_list(db)] == [new.id]
    assert not await worker_heartbeat(db, old, job_ids=[], now=T0 + timedelta(days=2))


async def test_bad_registrations_are_refused(worker_login_pool: Pool) -> None:
    worker = Database(worker_login_pool)
    with pytest.raises(DatabaseError, match="heartbeat interval"):
        await worker_register(worker, seat(every=0.1))
    with pytest.raises(DatabaseError, match="workers_concurrency_sensible"):
        await worker_register(worker, seat(concurrency=0))


async def test_the_runner_registers_reports_its_jobs_in_hand_and_unregisters(
    factory: Factory, worker_db: Database, db: Database, settings: Settings
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    job = await factory.job(run)
    seen: list[WorkerRow] = []

    async def handler(ctx: JobContext) -> None:
        await runner.presence.heartbeat(worker_db)
        seen.extend(await worker_list(db))

    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=2,
        burst=True,
        worker_id="bench:1",
        handlers={JobKind.FETCH: handler},
    )
    stats = await runner.run()

    assert stats.completed == 1
    [row] = seen
    assert (row.name, row.kinds, row.concurrency, row.job_ids, row.alive) == (
        "bench:1",
        (JobKind.FETCH,),
        2,
        (job.id,),
        True,
    )
    # The cadence of the job heartbeats: a third of the fetch lease (5 min).
    assert row.heartbeat_every == timedelta(seconds=100)
    assert await worker_list(db) == []


async def test_stats_lists_the_workers_alive_and_dead(db_url: str, db: Database) -> None:
    await worker_register(db, seat("gone-host:7"), now=await db_now(db) - timedelta(hours=1))
    live = await worker_register(db, seat("live-host:8", kinds=(JobKind.EXPORT,)))
    await worker_heartbeat(db, live, job_ids=[5])

    listed = json_out(await invoke(db_url, "stats", "--json"))["workers"]
    table = await invoke(db_url, "stats")

    assert [(w["name"], w["alive"], w["kinds"], w["job_ids"]) for w in listed] == [
        ("live-host:8", True, ["export"], [5]),
        ("gone-host:7", False, ["fetch"], []),
    ]
    assert listed[0]["heartbeat_every_seconds"] == 10
    assert table.exit_code == 0
    lines = table.stdout.splitlines()
    assert any("workers: 1 alive" in line for line in lines)
    assert any("live-host:8" in line and "1: 5" in line and "alive" in line for line in lines)
    assert any("gone-host:7" in line and "dead" in line for line in lines)


async def test_run_and_runs_say_when_no_worker_is_running(
    db_url: str, db: Database, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run)
    settled = await factory.run(status=RunStatus.COMPLETED)
    await factory.job(settled, status=JobStatus.COMPLETED)
    await worker_register(db, seat("gone-host:7"), now=await db_now(db) - timedelta(hours=1))
    # A live worker of the other kind, and one working another run only, claim none of it.
    await worker_register(db, seat("export-host:8", kinds=(JobKind.EXPORT,)))
    await worker_register(db, seat("sync-host:9", run_id=settled.id))

    shown = await invoke(db_url, "run", str(run.id))
    as_json = json_out(await invoke(db_url, "run", str(run.id), "--json"))
    listed = {
        r["id"]: r["waiting_for_worker"] for r in json_out(await invoke(db_url, "runs", "--json"))
    }
    table = await invoke(db_url, "runs")

    assert NO_WORKER in shown.stdout and as_json["waiting_for_worker"] is True
    assert listed == {run.id: True, settled.id: False}
    assert f"runs {run.id}: {NO_WORKER}" in table.stdout.replace("\n", " ")

    await worker_register(db, seat("fetch-host:10"))
    shown = await invoke(db_url, "run", str(run.id))
    assert NO_WORKER not in shown.stdout
    assert (
        json_out(await invoke(db_url, "run", str(run.id), "--json"))["waiting_for_worker"] is False
    )


async def test_a_run_waits_for_a_worker_only_with_jobs_that_could_be_worked_now(
    db: Database, factory: Factory
) -> None:
    later = await factory.run(status=RunStatus.PENDING)
    await factory.job(later, run_after=T0 + timedelta(days=1))
    abandoned = await factory.run(status=RunStatus.RUNNING)
    await factory.job(
        abandoned, status=JobStatus.RUNNING, locked_by="gone:1", heartbeat_at=T0, locked_at=T0
    )
    ids = [later.id, abandoned.id]

    waiting = await run_waiting_for_worker(db, ids, now=T0 + timedelta(minutes=1))
    past_lease = await run_waiting_for_worker(db, ids, now=T0 + timedelta(minutes=6))

    assert waiting == set()
    assert past_lease == {abandoned.id}


async def test_sync_no_wait_says_when_no_worker_will_work_the_run(
    db_url: str, db: Database, factory: Factory
) -> None:
    env = {
        **runtime_env(db_url),
        "SMUVES_SECRET_KEY": SECRET,
        "SMUVES_COUNT_TIMEOUT_SECONDS": "0",
    }
    portal = await factory.portal()
    alone = await invoke(db_url, "sync", str(portal), "--types", "site_page", "--no-wait", env=env)
    await worker_register(db, seat("fetch-host:10"))
    served = await invoke(db_url, "sync", str(portal), "--types", "blog_post", "--no-wait", env=env)

    assert alone.exit_code == 0, alone.output
    assert NO_WORKER in alone.stdout
    assert served.exit_code == 0, served.output
    assert "enqueued" in served.stdout and NO_WORKER not in served.stdout
