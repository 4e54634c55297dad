"""The totals of incremental fetches: known before the job stores anything, equal to what it
stores or confirms, never below its progress, and its bar's end (workers/incremental.py)."""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Any

import pytest
from rich.console import Console

from smuves_sync.cli.common import ExitCode
from smuves_sync.cli.progress import _Bars
from smuves_sync.cli.sync import sync_portal
from smuves_sync.models import ContentType, Job, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.queue import Queue
from smuves_sync.testing.fake_hubspot import Churn, FaultKind, FaultRule, PortalSpec
from smuves_sync.workers.runner import Runner
from tests.support import TOKEN, Sync, fake_portal, query

SPEC = fake_portal(7351, "450,40,130,3,80,12,30,25,3", seed=8, archived_share=0.1)
PAGES, POSTS, ROWS = ContentType.SITE_PAGE, ContentType.BLOG_POST, ContentType.HUBDB_ROW

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)

# job id -> (processed, total) after each of its checkpoints, in order
Checkpoints = dict[int, list[tuple[int, int | None]]]


@pytest.fixture
def checkpoints(monkeypatch: pytest.MonkeyPatch) -> Checkpoints:
    """Every checkpoint the fetch jobs commit, as the queue returns them."""
    recorded: Checkpoints = defaultdict(list)
    original = Queue.checkpoint

    async def spy(self: Queue, job: Job, cursor: str | None, processed: int, **kw: Any) -> Job:
        saved = await original(self, job, cursor, processed, **kw)
        recorded[saved.id].append((saved.processed, saved.total))
        return saved

    monkeypatch.setattr(Queue, "checkpoint", spy)
    return recorded


async def fetch(
    sync: Sync, portal: int, types: list[ContentType] | None = None, *, full: bool = False
) -> dict[str, dict[str, Any]]:
    """One fetch worked to the end: its jobs by type, with how each read (mode, changed, …)."""
    started = await start_fetch(sync.worker_db, portal, types, full=full)
    await Runner(
        sync.worker_db, sync.settings, kinds=[JobKind.FETCH], concurrency=2, burst=True
    ).run()
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    reads = await query(sync.db, "sync_reads_of_portal", portal_id=portal)
    mode = {r["job_id"]: r for r in reads}
    return {
        j["content_type"]: {**j, "read": mode[j["id"]]}
        for j in jobs
        if j["run_id"] == started.run.id
    }


def changed_since(before: list[Any], after: list[Any]) -> int:
    """How many objects are new, edited, archived or restored between two truths."""
    return len(set(after) - set(before))


def never_past_the_total(checkpoints: Checkpoints, job_id: int) -> None:
    for processed, total in checkpoints[job_id]:
        assert total is not None and processed <= total, checkpoints[job_id]


async def test_an_incremental_job_has_its_total_before_it_stores_anything(
    sync: Sync, checkpoints: Checkpoints
) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    before = {t: sync.truth(portal, t) for t in (PAGES, POSTS)}
    # More site pages changed than a page holds (a count follows the first answer), a few
    # posts (the first answer holds them all); the HubDB rows of the churned tables.
    sync.fake.advance(portal, Churn(changed=0.3, deleted=0, added=0, archived=0, types=(PAGES,)))
    sync.fake.advance(portal, Churn(changed=0.05, deleted=0, added=0.02, archived=0.02))
    checkpoints.clear()

    jobs = await fetch(sync, portal)

    assert {j["read"]["mode"] for j in jobs.values()} == {"incremental"}
    for content_type, job in jobs.items():
        never_past_the_total(checkpoints, job["id"])
        assert job["processed"] == job["total"], content_type
        assert job["total"] == job["read"]["changed"] + job["read"]["unchanged"], content_type
        if content_type != ROWS:  # flat types: exact from the first checkpoint on
            assert checkpoints[job["id"]][0] == (0, job["total"]), content_type
    for content_type in (PAGES, POSTS):
        truth = changed_since(before[content_type], sync.truth(portal, content_type))
        assert jobs[content_type]["total"] == truth > 0
    assert jobs["site_page"]["total"] > 100  # more than a page: counted, not read off a page
    # HubDB rows: exact before the job completes (the last changed table's first answer).
    rows = checkpoints[jobs["hubdb_row"]["id"]]
    assert rows[-1][1] == jobs["hubdb_row"]["total"] > 0


async def test_an_unchanged_portal_costs_no_more_requests_and_its_totals_are_zero(
    sync: Sync, checkpoints: Checkpoints
) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    sync.fake.reset_stats()
    checkpoints.clear()

    jobs = await fetch(sync, portal)

    # The live pass of each type; beside it what was archived since for the types whose
    # archiving moves no `updated` (pages, posts, authors, tags: one archived as another comes
    # back leaves the live pass as it was); none for the HubDB rows, which read the tables
    # their run's tables job listed.
    quiet = sum(1 for t in ContentType if t.spec.archive_filter is None and t.spec.parent is None)
    archiving = len(ContentType) - quiet - 1
    assert sync.fake.stats(portal).requests == 2 * archiving + quiet
    for job in jobs.values():
        assert (job["processed"], job["total"]) == (0, 0)
        assert checkpoints[job["id"]][0] == (0, 0)


async def test_a_full_read_is_counted_up_front_as_before(
    sync: Sync, checkpoints: Checkpoints
) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal, [POSTS])
    checkpoints.clear()

    jobs = await fetch(sync, portal, [POSTS], full=True)

    job = jobs["blog_post"]
    assert job["read"]["mode"] == "full"
    truth = len(sync.fake.ground_truth(portal, POSTS))
    assert checkpoints[job["id"]][0] == (0, truth)  # the count, before the first page
    assert job["processed"] == job["total"] == truth
    never_past_the_total(checkpoints, job["id"])


async def test_smuves_syncs_bars_of_a_re_sync_end_at_their_totals(sync: Sync) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    sync.fake.advance(portal, Churn(changed=0.1, deleted=0, added=0.05, archived=0.02))
    console = Console(file=io.StringIO(), width=200)

    code, snapshot = await sync_portal(
        sync.settings, portal, None, wait=True, concurrency=2, console=console
    )

    assert code is ExitCode.OK and snapshot is not None
    bars = _Bars(console)
    bars.show(snapshot)
    tasks = bars.progress.tasks
    assert len(tasks) == len(ContentType)
    assert all(t.total is not None and t.completed == t.total for t in tasks)
    assert sum(t.total or 0 for t in tasks) > 0


# 150 posts, none archived: the ids listing of a purge takes two pages (offset cursors).
DRIFTING = PortalSpec(portal_id=7352, token=TOKEN, seed=3, blog_posts=150, archived_share=0.0)


@pytest.mark.hubspot(DRIFTING, ten_second_limit=None, cursors="offset")
async def test_objects_created_while_the_job_runs_never_put_progress_past_the_total(
    sync: Sync, checkpoints: Checkpoints
) -> None:
    portal = await sync.plant_portal()
    await fetch(sync, portal)
    # Three posts purged: the live count differs, so the live pass's ids are listed. The
    # re-sync asks 1 the live pass's first page, 2 the archived pass's, 3 and 4 the ids; five
    # posts are created as the ids listing starts, after the total was set.
    sync.fake.advance(portal, Churn(changed=0.02, deleted=0.02, added=0, archived=0))
    sync.fake.set_faults((FaultRule(FaultKind.DRIFT, on_requests=(3,), created=5),))
    checkpoints.clear()

    jobs = await fetch(sync, portal, [POSTS])

    job = jobs["blog_post"]
    never_past_the_total(checkpoints, job["id"])
    assert job["processed"] == job["total"] == len(sync.fake.ground_truth(portal, POSTS))
    assert max(p for p, _ in checkpoints[job["id"]]) == job["total"]
    assert await sync.stored(portal, POSTS) == sync.truth(portal, POSTS)
