"""The export handler in a runner: default file place, JSON Lines with data, failures recorded."""

from __future__ import annotations

import json
from pathlib import Path

from smuves_sync.models import ContentType, ExportFormat, JobKind
from smuves_sync.orchestrator import start_export
from smuves_sync.workers.runner import Runner
from tests.factories import Factory
from tests.support import Sync, query

# No `hubspot` marker: the fake of the `sync` fixture serves no portal; an export needs none.


async def plant_pages(factory: Factory, n: int) -> int:
    portal = await factory.portal()
    await factory.content_rows(await factory.run(portal), n, content_type=ContentType.BLOG_POST)
    return portal


async def test_a_jsonl_export_goes_under_the_export_dir_with_every_object(
    sync: Sync, tmp_path: Path
) -> None:
    worker_db, db = sync.worker_db, sync.db
    portal = await plant_pages(sync.factory, 50)
    started = await start_export(worker_db, portal, ContentType.BLOG_POST, ExportFormat.JSONL)
    settings = sync.settings_with(export_dir=tmp_path / "out")

    stats = await Runner(
        worker_db, settings, kinds=[JobKind.EXPORT], concurrency=1, burst=True
    ).run()

    assert stats.completed == 1
    path = tmp_path / "out" / f"portal-{portal}" / f"blog_post-run{started.run.id}.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["hubspot_id"] for r in lines] == [f"{n:08d}" for n in range(1, 51)]
    assert lines[6]["data"] == {"id": "7", "name": "Page 7", "htmlTitle": "x" * 200}
    assert [r["archived"] for r in lines[:10]] == [False] * 9 + [True]
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["path"], export["row_count"]) == ("completed", str(path), 50)
    assert export["bytes"] == path.stat().st_size


async def test_an_export_that_cannot_be_written_fails_and_its_row_says_so(
    sync: Sync, tmp_path: Path
) -> None:
    worker_db, db = sync.worker_db, sync.db
    portal = await plant_pages(sync.factory, 5)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the export wants a directory")
    started = await start_export(
        worker_db,
        portal,
        ContentType.BLOG_POST,
        ExportFormat.CSV,
        path=blocker / "x.csv",
        max_attempts=1,
    )
    settings = sync.settings

    stats = await Runner(
        worker_db, settings, kinds=[JobKind.EXPORT], concurrency=1, burst=True
    ).run()

    assert stats.failed == 1
    [job] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert job["status"] == "failed" and "not-a-directory" in job["last_error"]
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["row_count"]) == ("failed", None)
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["job_failed", "run_failed"]
