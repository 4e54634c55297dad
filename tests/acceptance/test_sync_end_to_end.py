"""`smuves sync` end to end: a real Postgres, the fake HubSpot, the command as a subprocess."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule
from tests.acceptance.conftest import ProcessSync, Spawn
from tests.support import TOKEN, eventually, fake_portal, query, smuves

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

# 1,500 + 1,000 + 1,400 + 4 tables + 4 x 250 rows + 20 authors + 40 tags + 30 redirects
# + 6 blogs = 5,000 objects, of every type.
PORTAL = fake_portal(8001, "1500,1000,1400,4,250,20,40,30,6", seed=5, archived_share=0.08)
SMALL = fake_portal(8002, "300,0,200,0,0", seed=2, archived_share=0.1)
MIXED = fake_portal(8003, "800,300,800,3,150", seed=8, archived_share=0.1)
ALWAYS_500 = FaultRule(FaultKind.STATUS, status=500, share=1.0, content_type=ContentType.BLOG_POST)
FLAKY = (
    FaultRule(FaultKind.RATE_LIMIT, share=0.1, policy="SECONDLY"),
    FaultRule(FaultKind.STATUS, status=503, share=0.1),
)
# The first page of each type takes 8 s: the first sync is surely still fetching when the
# second one asks (that takes a process start and one transaction).
STALLS = tuple(
    FaultRule(FaultKind.SLOW, on_requests=(3,), delay_ms=8000, content_type=content_type)
    for content_type in (ContentType.SITE_PAGE, ContentType.BLOG_POST)
)


@pytest.mark.hubspot(PORTAL, ten_second_limit=None)
async def test_a_full_sync_matches_hubspot_exactly(sync: ProcessSync) -> None:
    db = sync.db
    portal = await sync.plant_portal()

    result = await smuves(sync.env(), "sync", str(portal))

    assert result.code == 0, result.stderr
    assert "completed" in result.stdout
    objects = 0
    for content_type in ContentType:
        truth = sync.truth(portal, content_type)
        objects += len(truth)
        assert await sync.stored(portal, content_type) == truth
    assert objects == 5000
    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert len(jobs) == len(ContentType) == 9
    assert all(j["status"] == "completed" and j["processed"] == j["total"] for j in jobs)
    assert sum(j["total"] for j in jobs) == 5000
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert run["status"] == "completed"
    told = await query(db, "sync_notifications_of_run", run_id=run["id"])
    assert [n["kind"] for n in told] == ["run_completed"]


@pytest.mark.hubspot(SMALL, ten_second_limit=None, faults=(ALWAYS_500,))
async def test_a_type_that_always_fails_is_given_up_after_three_attempts(
    sync: ProcessSync,
) -> None:
    db = sync.db
    portal = await sync.plant_portal()

    result = await smuves(
        sync.env(),
        "sync",
        str(portal),
        "--types",
        "site_page,blog_post",
    )

    assert result.code == 1, result.stderr
    jobs = {j["content_type"]: j for j in await query(db, "sync_jobs_of_portal", portal_id=portal)}
    assert (jobs["site_page"]["status"], jobs["site_page"]["attempts"]) == ("completed", 1)
    assert (jobs["blog_post"]["status"], jobs["blog_post"]["attempts"]) == ("failed", 3)
    assert "500" in jobs["blog_post"]["last_error"]
    [run] = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert run["status"] == "partially_failed"
    told = await query(db, "sync_notifications_of_run", run_id=run["id"])
    assert [n["kind"] for n in told] == ["run_partially_failed"]
    assert "failed: blog_post" in told[0]["message"]
    assert "it was given up after 3 attempts" in told[0]["message"]


@pytest.mark.hubspot(MIXED, ten_second_limit=None, faults=FLAKY, fault_seed=9)
async def test_a_sync_through_injected_429s_and_5xx_completes_exactly(sync: ProcessSync) -> None:
    portal = await sync.plant_portal()
    env = sync.env(SMUVES_HUBSPOT_MAX_RETRIES="4")

    result = await smuves(env, "sync", str(portal))

    assert result.code == 0, result.stderr
    for content_type in ContentType:
        assert await sync.stored(portal, content_type) == sync.truth(portal, content_type)
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert all(j["status"] == "completed" and j["processed"] == j["total"] for j in jobs)
    stats = sync.fake.stats(MIXED.portal_id)
    assert stats.status_429 > 0 and stats.by_status.get(503, 0) > 0
    assert stats.faults_injected / stats.requests >= 0.15


@pytest.mark.hubspot(SMALL, ten_second_limit=None)
async def test_a_revoked_token_fails_every_job_at_once(sync: ProcessSync) -> None:
    portal = await sync.plant_portal()
    sync.fake.revoke_token(TOKEN)
    # The jobs' own requests only: no counting as the fetch starts (its 401 is counted in
    # tests/integration/test_start_totals.py).
    env = sync.env(SMUVES_COUNT_TIMEOUT_SECONDS="0")

    # One job at a time: its first request's 401 fails the run, nothing more is sent.
    result = await smuves(env, "sync", str(portal), "--concurrency", "1")

    assert result.code == 1, result.stderr
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert {j["status"] for j in jobs} == {"failed"}
    assert sorted(j["attempts"] for j in jobs) == [0] * (len(ContentType) - 1) + [1]
    for job in jobs:
        assert "revoked" in job["last_error"]
        assert f"smuves portal add {portal}" in job["last_error"]
    unauthorized = httpx.get(f"{sync.base_url}/_fake/stats").json()["unauthorized"]
    assert unauthorized == 1
    assert TOKEN not in result.stdout + result.stderr


@pytest.mark.hubspot(SMALL, ten_second_limit=None, faults=STALLS)
async def test_a_second_sync_of_a_running_portal_exits_3(
    sync: ProcessSync, spawn: Spawn, tmp_path: Path
) -> None:
    db = sync.db
    portal = await sync.plant_portal()
    env = sync.env()
    types = ("--types", "site_page,blog_post")
    first = await spawn(env, "sync", str(portal), *types, log=tmp_path / "first.log")

    async def first_is_running() -> bool:
        jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
        return [j["status"] for j in jobs] == ["running", "running"]

    await eventually(first_is_running, timeout=60)
    second = await smuves(env, "sync", str(portal), *types)

    assert second.code == 3, second.stdout + second.stderr
    assert "ALL_DUPLICATE_JOBS" in second.stderr
    runs = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert [r["status"] for r in runs] == ["running"]
    assert await asyncio.wait_for(first.wait(), 60) == 0, (tmp_path / "first.log").read_text()
    runs = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert [r["status"] for r in runs] == ["completed"]
