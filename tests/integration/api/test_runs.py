"""A run's progress (document and Server-Sent Events) and stopping it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.jobs import job_checkpoint, job_complete
from smuves_sync.errors import HubSpotUnreachable, LeaseLost
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.workers.failures import Fail, outcome_for
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory


async def test_a_run_shows_per_job_progress(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.RUNNING)
    await factory.job(
        run, status=JobStatus.RUNNING, attempts=2, processed=300, total=1000, last_error="HTTP 502"
    )
    await factory.job(run, content_type=ContentType.BLOG_POST)
    response = await client.get(f"/v1/runs/{run.id}", headers=alice.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "running" and body["kind"] == "fetch"
    assert [
        (j["content_type"], j["status"], j["processed"], j["total"], j["attempts"], j["last_error"])
        for j in body["jobs"]
    ] == [
        ("site_page", "running", 300, 1000, 2, "HTTP 502"),
        ("blog_post", "pending", 0, None, 0, None),
    ]
    # The lease and the resume cursor are the workers' business.
    assert "lease_token" not in body["jobs"][0] and "cursor" not in body["jobs"][0]


async def test_a_run_says_how_many_objects_could_not_be_stored_and_why(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.COMPLETED)
    await factory.job(run, status=JobStatus.COMPLETED)
    clean = await factory.run(portal, owner=alice.id, status=RunStatus.COMPLETED)
    for number in range(2):
        await factory.content_reject(run, f"{number}", reason="field 'name' is int, expected text")
    await factory.content_reject(run, content_type=ContentType.BLOG_POST)

    body = (await client.get(f"/v1/runs/{run.id}", headers=alice.headers)).json()
    nothing = (await client.get(f"/v1/runs/{clean.id}", headers=alice.headers)).json()

    assert body["rejected"] == {
        "objects": 3,
        "message": "3 objects could not be stored: site_page 2 (field 'name' is int, expected "
        "text), blog_post 1 (object has no usable 'id' (got NoneType))",
        "by_type": [
            {
                "content_type": "blog_post",
                "objects": 1,
                "reason": "object has no usable 'id' (got NoneType)",
                "reasons": 1,
            },
            {
                "content_type": "site_page",
                "objects": 2,
                "reason": "field 'name' is int, expected text",
                "reasons": 1,
            },
        ],
    }
    assert nothing["rejected"] == {"objects": 0, "message": None, "by_type": []}


@pytest.mark.parametrize("path", ["/v1/runs/{id}", "/v1/runs/{id}/events"])
async def test_an_unknown_run_is_404(client: httpx.AsyncClient, alice: User, path: str) -> None:
    response = await client.get(path.format(id=987654), headers=alice.headers)
    assert response.status_code == 404
    assert response.json() == {"code": "NOT_FOUND", "message": "run 987654 not found"}


async def test_stop_ends_open_jobs_and_the_worker_loses_its_lease(
    client: httpx.AsyncClient,
    factory: Factory,
    worker_db: Database,
    admin_pool: Pool,
    settings: Settings,
    alice: User,
) -> None:
    await factory.portal(alice.id, portal_id=61)
    started = await client.post(
        "/v1/portals/61/fetches",
        json={"content_types": ["site_page", "blog_post", "hubdb_table"]},
        headers=alice.headers,
    )
    run_id = started.json()["run"]["id"]
    queue = Queue(worker_db, settings, worker_id="test-worker")
    [claimed] = await queue.claim([JobKind.FETCH], limit=1)
    [done] = await queue.claim([JobKind.FETCH], limit=1)
    await queue.complete(done, processed=5)

    response = await client.post(f"/v1/runs/{run_id}/stop", headers=alice.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "stopped" and body["finished_at"] is not None
    assert {j["content_type"]: j["status"] for j in body["jobs"]} == {
        "site_page": "stopped",  # was running
        "blog_post": "completed",  # had finished: stays so
        "hubdb_table": "stopped",  # was pending
    }
    with pytest.raises(LeaseLost):
        await queue.heartbeat(claimed)
    with pytest.raises(LeaseLost):
        await queue.complete(claimed)
    jobs = await query(admin_pool, "check_jobs_of_run", run_id=run_id)
    assert [j["status"] for j in jobs] == ["stopped", "completed", "stopped"]

    again = await client.post(f"/v1/runs/{run_id}/stop", headers=alice.headers)
    assert again.status_code == 409 and again.json()["code"] == "RUN_FINISHED"
    # Stopped types are free again.
    restarted = await client.post(
        "/v1/portals/61/fetches", json={"content_types": ["site_page"]}, headers=alice.headers
    )
    assert restarted.status_code == 202


async def test_stopping_an_export_run_stops_its_export(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=62)
    started = await client.post(
        "/v1/portals/62/exports", json={"content_type": "blog_post"}, headers=alice.headers
    )
    export_id = started.json()["export"]["id"]
    stopped = await client.post(
        f"/v1/runs/{started.json()['run']['id']}/stop", headers=alice.headers
    )
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    export = await client.get(f"/v1/exports/{export_id}", headers=alice.headers)
    assert export.json()["status"] == "stopped" and export.json()["download_url"] is None


async def _events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """(event name, data) of each Server-Sent Event; comments are skipped."""
    name, data = "", ""
    async for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif line == "" and name:
            yield name, json.loads(data)
            name, data = "", ""


async def test_events_push_progress_until_the_run_ends(
    app_server: str, factory: Factory, worker_db: Database, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING, processed=10, total=20)
    assert job.lease_token is not None
    async with (
        httpx.AsyncClient(base_url=app_server, timeout=30) as client,
        client.stream("GET", f"/v1/runs/{run.id}/events", headers=alice.headers) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response.aiter_lines())
        name, first = await anext(events)
        assert (name, first["status"], first["jobs"][0]["processed"]) == ("progress", "running", 10)

        await job_checkpoint(worker_db, job.id, job.lease_token, "cursor-2", 15)
        name, second = await anext(events)
        assert (name, second["status"], second["jobs"][0]["processed"]) == (
            "progress",
            "running",
            15,
        )

        # The worker finishes the last job: the run settles and the stream ends with it.
        await job_complete(worker_db, job.id, job.lease_token, processed=20)
        name, last = await anext(events)
        assert (name, last["status"], last["jobs"][0]["processed"]) == ("end", "completed", 20)
        assert [event async for event in events] == []


async def test_events_of_a_finished_run_end_at_once(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id, status=RunStatus.FAILED)
    response = await client.get(f"/v1/runs/{run.id}/events", headers=alice.headers)
    assert response.status_code == 200
    assert response.text.startswith("event: end\ndata: {")
    assert json.loads(response.text.split("data: ", 1)[1])["status"] == "failed"


async def test_a_run_hubspot_was_unreachable_for_says_so_in_words(
    client: httpx.AsyncClient,
    factory: Factory,
    worker_db: Database,
    settings: Settings,
    alice: User,
) -> None:
    portal = await factory.portal(alice.id)
    run = await factory.run(portal, owner=alice.id)
    await factory.job(run)
    queue = Queue(worker_db, settings, worker_id="test-worker")
    [job] = await queue.claim(None)
    unreachable = HubSpotUnreachable(
        "unreachable", lasted=3600.0, cause="connection refused", portal_id=portal
    )
    outcome = outcome_for(job, unreachable)
    assert isinstance(outcome, Fail)
    await queue.fail(job, outcome.message, retryable=outcome.retryable, public=outcome.public)

    body = (await client.get(f"/v1/runs/{run.id}", headers=alice.headers)).json()
    assert body["status"] == "failed"
    assert [j["last_error"] for j in body["jobs"]] == [
        "HubSpot was unreachable for 1 h (connection refused): check HubSpot's status page "
        "(status.hubspot.com) or the network, then start the fetch again"
    ]
