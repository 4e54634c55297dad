"""A worker killed mid-fetch is resumed by another; an export is exactly the database."""

from __future__ import annotations

import csv
import math
from datetime import timedelta
from pathlib import Path

import pytest

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get
from smuves_sync.models import ContentType
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import PortalSpec
from tests.acceptance.conftest import ProcessSync, Spawn, stop
from tests.support import TOKEN, eventually, query, smuves, smuves_env
from tests.support.factories import Factory

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

CRASHY = PortalSpec(portal_id=8101, token=TOKEN, seed=4, blog_posts=3000, archived_share=0.05)


@pytest.mark.hubspot(CRASHY, ten_second_limit=None, latency_ms=100)
async def test_a_worker_killed_mid_fetch_is_resumed_from_its_checkpoint(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    started = await start_fetch(sync.worker_db, portal, [ContentType.BLOG_POST])
    await query(db, "set_job_lease", kind="fetch", lease=timedelta(seconds=2))
    env = sync.env()
    first = await spawn(env, "worker", "--kinds", "fetch", log=tmp_path / "first.log")

    async def some_pages_stored() -> bool:
        job = await job_get(db, started.jobs[0].id)
        return job is not None and job.processed >= 1000

    await eventually(some_pages_stored, timeout=60)
    first.kill()  # SIGKILL: no goodbye, the lease just stops being renewed
    await first.wait()
    killed_at = await job_get(db, started.jobs[0].id)
    assert killed_at is not None and killed_at.status == "running"
    assert killed_at.total is not None and killed_at.processed < killed_at.total

    second = await spawn(env, "worker", "--kinds", "fetch", log=tmp_path / "second.log")
    try:

        async def run_settled() -> bool:
            runs = await query(db, "sync_runs_of_portal", portal_id=portal)
            return runs[0]["status"] not in ("pending", "running")

        await eventually(run_settled, timeout=60)
    finally:
        assert await stop(second) == 0, (tmp_path / "second.log").read_text()

    job = await job_get(db, started.jobs[0].id)
    truth = sync.truth(portal, ContentType.BLOG_POST)
    assert job is not None
    assert (job.status, job.attempts) == ("completed", 2)
    assert job.processed == job.total == len(truth)
    stored = await sync.stored(portal, ContentType.BLOG_POST)
    assert stored == truth  # exact, and no duplicates (same length)
    live = len(fake.ground_truth(CRASHY.portal_id, ContentType.BLOG_POST, archived=False))
    pages = math.ceil(live / 100) + max(1, math.ceil((len(truth) - live) / 100))
    requests = fake.stats(CRASHY.portal_id).by_content_type["blog_post"]
    # Two counts, every page once, two counts at the end (the check that the listing saw
    # everything), plus at most the three pages the killed worker had in hand but not stored
    # (storing, queued, in flight). Starting over would have cost the ten or more pages
    # before the checkpoint again.
    assert 4 + pages <= requests <= 4 + pages + 3
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert run["status"] == "completed"


async def test_an_export_of_10000_rows_is_exactly_the_database(
    factory: Factory, db: Database, db_url: str, tmp_path: Path
) -> None:
    portal = await factory.portal()
    await factory.content_rows(await factory.run(portal), 10_000)
    formula = '=HYPERLINK("http://evil.example.com","click me")'
    await query(
        db, "sync_rename_content", portal_id=portal, hubspot_id="00004242", new_name=formula
    )
    out = tmp_path / "site pages.csv"
    env = smuves_env(db_url)  # no HubSpot needed

    result = await smuves(
        env, "export", str(portal), "--type", "site_page", "--format", "csv", "--out", str(out)
    )

    assert result.code == 0, result.stdout + result.stderr
    with out.open(newline="", encoding="utf-8") as stream:
        exported = list(csv.DictReader(stream))
    stored = await query(db, "sync_content_names", portal_id=portal, content_type="site_page")
    assert len(exported) == len(stored) == 10_000
    assert [r["hubspot_id"] for r in exported] == [r["hubspot_id"] for r in stored]
    expected_names = ["'" + r["name"] if r["name"] == formula else r["name"] for r in stored]
    assert [r["name"] for r in exported] == expected_names
    assert exported[4241]["name"] == "'" + formula
    assert [r["archived"] == "true" for r in exported] == [r["archived"] for r in stored]
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["row_count"]) == ("completed", 10_000)
    assert (export["path"], export["bytes"]) == (str(out), out.stat().st_size)
    assert not out.with_name(out.name + ".part").exists()
    [job] = [j for j in await query(db, "sync_jobs_of_portal", portal_id=portal)]
    assert (job["kind"], job["status"], job["processed"], job["total"]) == (
        "export",
        "completed",
        10_000,
        10_000,
    )
