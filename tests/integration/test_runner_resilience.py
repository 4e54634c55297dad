"""No single row ends a worker: broken schedules and jobs whose handlers raise anything."""

from __future__ import annotations

import asyncio
import logging
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from smuves_sync.cli.worker import schedule_firing
from smuves_sync.db import Database
from smuves_sync.models import ContentType, JobKind, JobStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.settings import Settings
from smuves_sync.workers.context import Handler, JobContext
from smuves_sync.workers.runner import Runner, RunnerStats
from tests.support import Sync, clean_env, query, run
from tests.support.factories import Factory
from tests.support.logins import runtime_env, runtime_urls

# Due by the database's clock, which is the one a worker fires schedules by.
LONG_AGO = datetime.now(UTC) - timedelta(days=2)


def worker_settings(db_url: str) -> Settings:
    return Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        poll_interval_seconds=0.1,
        backoff_base_seconds=0,
    )


async def work_through(
    worker_db: Database, db_url: str, handler: Handler, *, concurrency: int
) -> RunnerStats:
    """A burst worker that fires due schedules as `smuves worker` does and hands fetch jobs to
    `handler`, until nothing is left."""
    settings = worker_settings(db_url)
    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=concurrency,
        burst=True,
        handlers={JobKind.FETCH: handler},
        periodic=[schedule_firing(settings)],
    )
    return await asyncio.wait_for(runner.run(), 30)


async def test_broken_rows_do_not_stop_a_worker_from_serving_other_jobs(
    sync: Sync, caplog: pytest.LogCaptureFixture
) -> None:
    factory, db, worker_db, db_url = sync.factory, sync.db, sync.worker_db, sync.db_url
    # A schedule that parses but never fires, written straight into the table, first in line.
    haunted = await factory.portal()
    never = await factory.schedule(haunted, cron_expression="0 0 31 2 *", next_run_at=LONG_AGO)
    # A healthy schedule behind it, and jobs of other portals already waiting.
    nightly = await factory.portal()
    await factory.schedule(
        nightly, content_types=[ContentType.BLOG_POST], next_run_at=LONG_AGO + timedelta(hours=1)
    )
    waiting = [await factory.portal() for _ in range(3)]
    good_jobs = [
        (await start_fetch(worker_db, p, [ContentType.SITE_PAGE])).jobs[0] for p in waiting
    ]
    # A job whose handler raises what no handler should: SystemExit from some library.
    cursed = await factory.portal()
    [cursed_job] = (
        await start_fetch(worker_db, cursed, [ContentType.SITE_PAGE], max_attempts=1)
    ).jobs

    handled: list[int] = []

    async def handler(ctx: JobContext) -> None:
        handled.append(ctx.job.id)
        if ctx.job.portal_id == cursed:
            raise SystemExit("a library called sys.exit()")
        await ctx.queue().complete(ctx.job, processed=0)

    caplog.set_level(logging.INFO, logger="smuves_sync")
    stats = await work_through(worker_db, db_url, handler, concurrency=2)

    # Every good job, and the one the healthy schedule started, was worked and completed.
    jobs = {j["id"]: j for p in [*waiting, nightly] for j in await _jobs(db, p)}
    assert len(jobs) == 4
    assert {j["status"] for j in jobs.values()} == {"completed"}
    assert {j.id for j in good_jobs} <= set(jobs)
    assert (stats.completed, stats.failed) == (4, 1)
    # The cursed job failed (its one attempt spent), saying what its handler raised.
    [row] = await _jobs(db, cursed)
    assert (row["id"], row["status"]) == (cursed_job.id, str(JobStatus.FAILED))
    assert "SystemExit" in row["last_error"] and "sys.exit()" in row["last_error"]
    assert handled.count(cursed_job.id) == 1
    # The schedule that never fires is off, and was named in the log.
    schedules = {s["id"]: s for s in await query(db, "opscheck_schedules")}
    assert schedules[never]["enabled"] is False
    assert [s["enabled"] for i, s in schedules.items() if i != never] == [True]
    assert any(
        f"schedule {never} " in r.getMessage() and "disabled" in r.getMessage()
        for r in caplog.records
    )


async def test_a_schedule_row_this_code_cannot_read_does_not_stop_the_worker(
    sync: Sync, caplog: pytest.LogCaptureFixture
) -> None:
    factory, db, worker_db, db_url = sync.factory, sync.db, sync.worker_db, sync.db_url
    # A newer release taught the database a content type this worker's code does not know.
    await query(db, "resilience_allow_any_content_type")
    future = await factory.portal()
    await query(
        db, "resilience_plant_schedule_of_type", portal_id=future, content_type="blog_topic"
    )
    portal = await factory.portal()
    [job] = (await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])).jobs

    async def handler(ctx: JobContext) -> None:
        await ctx.queue().complete(ctx.job, processed=0)

    caplog.set_level(logging.INFO, logger="smuves_sync")
    stats = await work_through(worker_db, db_url, handler, concurrency=1)

    assert stats.completed == 1
    [row] = await _jobs(db, portal)
    assert (row["id"], row["status"]) == (job.id, "completed")
    said = [r for r in caplog.records if "firing due schedules" in r.getMessage()]
    assert said and said[0].levelno == logging.ERROR and "blog_topic" in said[0].getMessage()


async def test_smuves_worker_starts_and_exits_cleanly_past_a_schedule_that_never_fires(
    factory: Factory, db: Database, db_url: str
) -> None:
    portal = await factory.portal()
    never = await factory.schedule(portal, cron_expression="0 0 31 2 *", next_run_at=LONG_AGO)
    done = await run(
        sys.executable,
        "-c",
        "from smuves_sync.cli import main; main()",
        "worker",
        "--burst",
        "--kinds",
        "export",
        env=clean_env(SMUVES_DATABASE_URL=db_url, **runtime_env(db_url)),
        timeout=60,
    )

    assert done.code == 0, done.stderr
    assert f"schedule {never} (portal {portal}, '0 0 31 2 *') disabled" in done.stderr
    [row] = await query(db, "opscheck_schedules")
    assert row["enabled"] is False


async def _jobs(db: Database, portal: int) -> list[dict[str, Any]]:
    return await query(db, "sync_jobs_of_portal", portal_id=portal)
