"""Totals counted as a fetch starts (orchestrator.TotalsCounter) for `smuves sync`: the jobs are
born with their totals, so the bars have them before any worker claims a job; the operator reads
the token, a non-member does not; the counts go through the process's rate-limit budget."""

from __future__ import annotations

import io

import pytest
from pydantic import SecretStr
from rich.console import Console

from smuves_sync.cli.common import ExitCode
from smuves_sync.cli.progress import _Bars
from smuves_sync.cli.sync import sync_portal
from smuves_sync.db import Database
from smuves_sync.errors import PortalNeedsReconnect
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, JobStatus
from smuves_sync.orchestrator import CountPlan, TotalsCounter
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.follow import run_snapshot
from tests.support import SECRET, TOKEN, Sync, fake_portal, invoke, query

SPEC = fake_portal(9201, "340,30,90,3,40,8,20,15,3", seed=6, archived_share=0.1)

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def _truth(sync: Sync) -> dict[str, int]:
    return {t.value: len(sync.fake.ground_truth(SPEC.portal_id, t)) for t in ContentType}


def _console() -> Console:
    return Console(file=io.StringIO(), width=200)


def _counter(sync: Sync, limits: RateLimitRegistry | None = None) -> TotalsCounter:
    cipher = TokenCipher(SecretStr(SECRET))
    return TotalsCounter(sync.settings, limits or RateLimitRegistry(), cipher)


async def _totals_of_jobs(sync: Sync, portal: int) -> dict[str, int | None]:
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    return {j["content_type"]: j["total"] for j in jobs}


async def test_smuves_sync_enqueues_jobs_with_their_totals_and_draws_them_first(
    sync: Sync,
) -> None:
    portal = await sync.plant_portal()
    printed = io.StringIO()

    code, _ = await sync_portal(
        sync.settings,
        portal,
        None,
        wait=False,
        concurrency=1,
        console=Console(file=printed, width=400),
    )

    assert code is ExitCode.OK
    truth = _truth(sync)
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert {j["content_type"]: j["total"] for j in jobs} == truth
    assert {(j["status"], j["attempts"]) for j in jobs} == {("pending", 0)}
    assert f"site_page ({truth['site_page']:,})" in printed.getvalue()
    # The first frame of the bars: every bar has its total, and no job has been claimed.
    snapshot = await run_snapshot(sync.worker_db, portal, jobs[0]["run_id"])
    assert {j.status for j in snapshot.jobs} == {JobStatus.PENDING}
    bars = _Bars(_console())
    bars.show(snapshot)
    assert {t.description: t.total for t in bars.progress.tasks} == truth


async def test_smuves_sync_to_the_end_counts_each_type_once(sync: Sync) -> None:
    portal = await sync.plant_portal()

    code, snapshot = await sync_portal(
        sync.settings, portal, ["blog_tag"], wait=True, concurrency=1, console=_console()
    )

    assert code is ExitCode.OK and snapshot is not None
    [job] = snapshot.jobs
    assert job.processed == job.total == len(sync.fake.ground_truth(SPEC.portal_id, "blog_tag"))
    # Two counts (live, archived) at the start; the job, which had its total, did not count
    # again: one page of each pass follows them (20 tags fit in a page), then the two counts
    # at the end and, per pass, what was created since it began, which check that the
    # listing saw everything.
    assert sync.fake.stats(SPEC.portal_id).by_content_type["blog_tag"] == 2 + 2 + 2 + 2


async def test_a_failing_count_leaves_the_total_to_the_job(sync: Sync) -> None:
    portal = await sync.plant_portal()
    sync.fake.set_faults((FaultRule(FaultKind.STATUS, status=502, share=1.0),))
    settings = sync.settings_with(count_timeout_seconds=0.5)

    code, _ = await sync_portal(
        settings, portal, ["blog_tag", "blog"], wait=False, concurrency=1, console=_console()
    )

    assert code is ExitCode.OK
    assert await _totals_of_jobs(sync, portal) == {"blog_tag": None, "blog": None}


async def test_a_revoked_token_is_asked_once_and_the_start_refused(sync: Sync) -> None:
    portal = await sync.plant_portal()
    sync.fake.revoke_token(TOKEN)

    with pytest.raises(PortalNeedsReconnect, match="Reconnect the portal"):
        await sync_portal(
            sync.settings, portal, None, wait=False, concurrency=1, console=_console()
        )

    # The first count goes alone; its 401 is the only request, and nothing is created.
    assert sync.fake.unauthorized == 1
    assert await query(sync.db, "token_runs_of_portal", portal_id=portal) == []
    [marked] = await query(sync.db, "token_rejected_at", portal_id=portal)
    assert marked["token_rejected_at"] is not None

    # While it is marked, the command refuses at once (exit 2, one line), asking nothing.
    result = await invoke(sync.db_url, "sync", str(portal), env=sync.env())
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().count("\n") == 0
    assert "PORTAL_NEEDS_RECONNECT" in result.stderr and TOKEN not in result.output
    assert sync.fake.unauthorized == 1


async def test_no_counting_at_the_start_when_its_timeout_is_zero(sync: Sync) -> None:
    portal = await sync.plant_portal()
    settings = sync.settings_with(count_timeout_seconds=0)

    code, _ = await sync_portal(
        settings, portal, None, wait=False, concurrency=1, console=_console()
    )

    assert code is ExitCode.OK
    assert set((await _totals_of_jobs(sync, portal)).values()) == {None}
    assert sync.fake.stats(SPEC.portal_id).requests == 0


async def test_the_counts_are_paced_by_the_processs_budget_of_the_portal(sync: Sync) -> None:
    await sync.plant_portal()
    limits = RateLimitRegistry()
    counter = _counter(sync, limits)

    plan = await counter.plan(sync.db, SPEC.portal_id, operator=True)
    totals = await counter.count(plan)

    assert {t.value: n for t, n in totals.items()} == _truth(sync)
    sent = sync.fake.stats(SPEC.portal_id).requests
    assert sent > 0
    assert limits.budget(SPEC.portal_id).stats.granted == sent


async def test_a_non_member_plans_no_token_and_counts_nothing(sync: Sync, app_db: Database) -> None:
    await sync.plant_portal()
    stranger = await sync.factory.user()
    counter = _counter(sync)

    async with app_db.as_user(stranger) as scoped:
        plan = await counter.plan(scoped, SPEC.portal_id)

    assert plan == CountPlan(SPEC.portal_id, tuple(ContentType), None)
    assert await counter.count(plan) == {}
    assert sync.fake.stats(SPEC.portal_id).requests == 0
