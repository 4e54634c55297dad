"""The export handler in a runner: the file's one place, JSON Lines with data, failures recorded."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.runs import run_stop
from smuves_sync.errors import LeaseLost
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, ExportFormat, JobKind
from smuves_sync.orchestrator import start_export
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.workers import export, export_format
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.export_format import ExportResult
from smuves_sync.workers.runner import Runner
from tests.support import Sync, query
from tests.support.factories import Factory

# No `hubspot` marker: the fake of the `sync` fixture serves no portal; an export needs none.


async def plant_pages(factory: Factory, n: int, owner: uuid.UUID | None = None) -> int:
    portal = await factory.portal(owner) if owner else await factory.portal()
    await factory.content_rows(await factory.run(portal), n, content_type=ContentType.BLOG_POST)
    return portal


async def test_a_jsonl_export_goes_under_the_export_dir_with_every_object(
    sync: Sync, tmp_path: Path
) -> None:
    worker_db, db = sync.worker_db, sync.db
    portal = await plant_pages(sync.factory, 50)
    started = await start_export(db, portal, ContentType.BLOG_POST, ExportFormat.JSONL)
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
    assert (export["status"], export["path"], export["row_count"]) == ("completed", None, 50)
    assert export["bytes"] == path.stat().st_size


async def test_an_export_that_cannot_be_written_fails_and_its_row_says_so(
    sync: Sync, tmp_path: Path
) -> None:
    worker_db, db = sync.worker_db, sync.db
    portal = await plant_pages(sync.factory, 5)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the export wants a directory")
    started = await start_export(
        db, portal, ContentType.BLOG_POST, ExportFormat.CSV, max_attempts=1
    )
    settings = sync.settings_with(export_dir=blocker)

    stats = await Runner(
        worker_db, settings, kinds=[JobKind.EXPORT], concurrency=1, burst=True
    ).run()

    assert stats.failed == 1
    [job] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert job["status"] == "failed" and "not-a-directory" in job["last_error"]
    [export] = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert (export["status"], export["row_count"]) == ("failed", None)
    told = await query(db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_failed"]


async def _claimed_export(
    sync: Sync, settings: Settings, owner: uuid.UUID
) -> tuple[JobContext, Path]:
    """A CSV export of 20 posts of `owner`'s portal, its job claimed; and where its file is
    published."""
    worker_db = sync.worker_db
    portal = await plant_pages(sync.factory, 20, owner)
    started = await start_export(sync.db, portal, ContentType.BLOG_POST, ExportFormat.CSV)
    [job] = await Queue(worker_db, settings).claim([JobKind.EXPORT])
    ctx = JobContext(job, worker_db, settings, RateLimitRegistry(), "test-worker")
    path = settings.export_dir / f"portal-{portal}" / f"blog_post-run{started.run.id}.csv"
    return ctx, path


@pytest.mark.parametrize("how", ["stopped", "lease lost"])
async def test_an_export_refused_its_completion_after_writing_leaves_no_file(
    sync: Sync, app_pool: Pool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    db = sync.db
    settings = sync.settings_with(export_dir=tmp_path / "out")
    owner = await sync.factory.user()
    ctx, path = await _claimed_export(sync, settings, owner)
    written = export_format.write_export

    async def write_then_lose(*args: Any, **kwargs: Any) -> ExportResult:
        result = await written(*args, **kwargs)
        # The whole file is written when the run is stopped (or another worker takes the job
        # over): the completion that follows is refused.
        if how == "stopped":
            async with Database(app_pool).as_user(owner) as scoped:  # POST /v1/runs/{id}/stop
                assert await run_stop(scoped, ctx.job.run_id) is not None
        else:
            await query(db, "sync_steal_lease", job_id=ctx.job.id)
        return result

    monkeypatch.setattr(export, "write_export", write_then_lose)

    with pytest.raises(LeaseLost):
        await export.handle_export(ctx)

    assert not path.exists(), "a published file that no exports row owns"
    assert list(path.parent.iterdir()) == []  # no half-written file either
    [row] = await query(db, "sync_exports_of_portal", portal_id=ctx.job.portal_id)
    assert (row["path"], row["row_count"]) == (None, None)
    assert row["status"] == ("stopped" if how == "stopped" else "running")


async def test_a_completed_export_is_published_at_its_one_place(sync: Sync, tmp_path: Path) -> None:
    settings = sync.settings_with(export_dir=tmp_path / "out")
    ctx, path = await _claimed_export(sync, settings, await sync.factory.user())

    await export.handle_export(ctx)

    [row] = await query(sync.db, "sync_exports_of_portal", portal_id=ctx.job.portal_id)
    assert (row["status"], row["path"], row["row_count"]) == ("completed", None, 20)
    assert row["bytes"] == path.stat().st_size
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
