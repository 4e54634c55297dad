"""/healthz and /metrics."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from smuves_sync import metrics as counters
from smuves_sync.api import create_app
from smuves_sync.db import Database, DbRole, Pool, pool_for
from smuves_sync.db.migrations import discover, find_migrations_dir
from smuves_sync.db.workers import WorkerSeat, worker_register
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.settings import Settings
from tests.integration.api.conftest import METRICS_HEADERS, make_token
from tests.support import query
from tests.support.factories import Factory


async def test_healthz_is_ok_on_a_migrated_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    latest = discover(find_migrations_dir())[-1].version
    assert response.json() == {"status": "ok", "migration": latest}


async def test_healthz_names_migrations_not_applied(
    api_settings: Settings, api_pool: Pool, tmp_path: Path
) -> None:
    newer = tmp_path / "migrations"
    shutil.copytree(find_migrations_dir(), newer)
    (newer / "9999_future_change.sql").write_text("SELECT 1;\n")
    app = create_app(api_settings.model_copy(update={"migrations_dir": newer}), pool=api_pool)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        response = await client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["code"] == "MIGRATIONS_NOT_CURRENT"
    assert "not applied: 9999" in response.json()["message"]


async def test_healthz_says_when_the_database_is_gone(db_url: str, api_settings: Settings) -> None:
    async with pool_for(db_url, role=DbRole.APP, max_size=1) as pool:
        app = create_app(api_settings, pool=pool)
    # The pool is closed now: no connection can be had, as when the server is down.
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as client:
        response = await client.get("/healthz")
        listed = await client.get("/v1/portals", headers=_any_user_headers())
    assert response.status_code == 503
    assert response.json()["code"] == "DATABASE_UNREACHABLE"
    assert listed.status_code == 503
    assert listed.json()["code"] == "DATABASE_UNAVAILABLE"


def _any_user_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {make_token('00000000-0000-4000-8000-00000000000a')}"}


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_metrics_count_jobs_durations_and_hubspot_requests(
    client: httpx.AsyncClient, factory: Factory, admin_pool: Pool
) -> None:
    now = datetime.now(UTC)
    run = await factory.run(status=RunStatus.RUNNING)
    # One job per type: the in-flight index allows no two pending jobs of a type.
    await factory.job(run, content_type=ContentType.SITE_PAGE, status=JobStatus.RUNNING)
    # Due for 10 minutes; the next one waits on purpose (a backoff), so it is not late.
    await factory.job(
        run, content_type=ContentType.LANDING_PAGE, run_after=now - timedelta(minutes=10)
    )
    await factory.job(run, content_type=ContentType.BLOG_POST, run_after=now + timedelta(hours=1))
    quick = await factory.job(run, content_type=ContentType.HUBDB_TABLE)
    slow = await factory.job(run, content_type=ContentType.HUBDB_ROW)
    for job, seconds, status in ((quick, 3, "completed"), (slow, 400, "failed")):
        await query(
            admin_pool,
            "plant_job_finished_at",
            job_id=job.id,
            created_at=now - timedelta(seconds=seconds),
            finished_at=now,
            status=status,
        )
    export_run = await factory.run(run.portal_id, kind=JobKind.EXPORT)
    await factory.job(export_run)
    counters.hubspot_response(200)
    counters.hubspot_response(429)
    counters.hubspot_rate_limited("TEN_SECONDLY_ROLLING")

    response = await client.get("/metrics", headers=METRICS_HEADERS)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)

    def jobs(kind: str, status: str) -> float:
        return samples[("smuves_jobs", (("kind", kind), ("status", status)))]

    assert (jobs("fetch", "running"), jobs("fetch", "pending"), jobs("fetch", "stopped")) == (
        1,
        2,
        0,
    )
    assert (jobs("fetch", "completed"), jobs("fetch", "failed"), jobs("export", "pending")) == (
        1,
        1,
        1,
    )
    oldest = samples[("smuves_oldest_pending_job_age_seconds", (("kind", "fetch"),))]
    assert 600 <= oldest < 3600
    assert samples[("smuves_oldest_pending_job_age_seconds", (("kind", "export"),))] < 600

    def bucket(status: str, le: str) -> float:
        labels = (("kind", "fetch"), ("le", le), ("status", status))
        return samples[("smuves_job_duration_seconds_bucket", labels)]

    assert (bucket("completed", "1.0"), bucket("completed", "5.0")) == (0, 1)
    assert (bucket("failed", "300.0"), bucket("failed", "900.0"), bucket("failed", "+Inf")) == (
        0,
        1,
        1,
    )
    completed = (("kind", "fetch"), ("status", "completed"))
    assert samples[("smuves_job_duration_seconds_count", completed)] == 1
    assert samples[("smuves_job_duration_seconds_sum", completed)] == pytest.approx(3, abs=1)

    assert samples[("smuves_hubspot_requests_total", (("status", "429"),))] >= 1
    assert (
        samples[("smuves_hubspot_rate_limited_total", (("policy", "TEN_SECONDLY_ROLLING"),))] >= 1
    )


async def test_metrics_count_the_live_workers(
    client: httpx.AsyncClient, admin_pool: Pool, worker_login_pool: Pool
) -> None:
    worker = Database(worker_login_pool)
    seat = WorkerSeat(
        name="host:1",
        host="host",
        pid=1,
        kinds=(JobKind.FETCH,),
        concurrency=1,
        heartbeat_every=timedelta(seconds=10),
    )
    none_yet = _samples((await client.get("/metrics", headers=METRICS_HEADERS)).text)
    await worker_register(worker, seat)
    await worker_register(worker, seat)
    # Seen last an hour ago: dead.
    past = datetime.now(UTC) - timedelta(hours=1)
    await worker_register(Database(admin_pool), seat, now=past)

    samples = _samples((await client.get("/metrics", headers=METRICS_HEADERS)).text)

    assert none_yet[("smuves_workers_live", ())] == 0
    assert samples[("smuves_workers_live", ())] == 2
