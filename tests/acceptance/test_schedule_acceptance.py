"""Two `smuves worker` processes and one due schedule: exactly one run, fetched to the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from smuves_sync.models import ContentType
from tests.acceptance.conftest import ProcessSync, Spawn, stop
from tests.support import db_now, eventually, fake_portal, query

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

PORTAL = fake_portal(8101, "250,0,150,0,0", seed=11)
TYPES = [ContentType.SITE_PAGE, ContentType.BLOG_POST]


@pytest.mark.hubspot(PORTAL, ten_second_limit=None)
async def test_two_workers_fire_one_due_schedule_exactly_once(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    db, factory = sync.db, sync.factory
    portal = await sync.plant_portal()
    env = sync.env()
    logs = [tmp_path / "worker1.log", tmp_path / "worker2.log"]
    workers = [await spawn(env, "worker", "--concurrency", "2", log=log) for log in logs]
    try:
        # Both are up and polling before the schedule becomes due, so both race for it.
        async def both_started() -> bool:
            return all(log.exists() and "kinds fetch,export" in log.read_text() for log in logs)

        await eventually(both_started, timeout=60)
        due_at = await db_now(db)
        schedule = await factory.schedule(
            portal, cron_expression="0 3 * * *", content_types=TYPES, next_run_at=due_at
        )

        async def run_completed() -> bool:
            runs = await query(db, "sync_runs_of_portal", portal_id=portal)
            return any(r["status"] == "completed" for r in runs)

        await eventually(run_completed, timeout=120)
    finally:
        codes = [await stop(w) for w in workers]

    assert codes == [0, 0]
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert (run["kind"], run["status"]) == ("fetch", "completed")
    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert [(j["content_type"], j["status"]) for j in jobs] == [
        ("site_page", "completed"),
        ("blog_post", "completed"),
    ]
    assert [j["processed"] for j in jobs] == [j["total"] for j in jobs]
    assert sum(j["total"] for j in jobs) == 400
    [row] = await query(db, "opscheck_schedules")
    assert row["id"] == schedule
    assert row["last_run_at"] is not None and row["last_run_at"] >= due_at
    assert row["next_run_at"] > due_at
    # Of the two workers exactly one started the run, and the other never even tried (the
    # in-flight dedup would have hidden a second firing; the schedule lock must prevent it).
    text = "".join(log.read_text() for log in logs)
    assert text.count(f"schedule {schedule} started run {run['id']}") == 1
    assert "skipped this firing" not in text
