"""The live parts: server-sent events with HTML fragments, over a real HTTP server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest

from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.dashboard.events import sse_event
from smuves_sync.db import Database, Pool
from smuves_sync.db.jobs import job_checkpoint, job_complete
from smuves_sync.db.workers import WorkerSeat, worker_register
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.settings import Settings
from tests.integration.dashboard.conftest import sign_in
from tests.support import serve_app
from tests.support.factories import Factory

Event = tuple[str, str]


@pytest.fixture
async def served(settings: Settings, admin_pool: Pool, auth: DashboardAuth) -> AsyncIterator[str]:
    """Base URL of the dashboard under uvicorn in this event loop, looking every 20 ms."""
    quick = settings.model_copy(update={"dashboard_refresh_seconds": 0.02})
    app = create_dashboard_app(quick, pool=admin_pool, auth=auth)
    async with serve_app(app, graceful_seconds=1) as base_url:
        yield base_url


async def events(lines: AsyncIterator[str]) -> AsyncIterator[Event]:
    """(name, data) of each event; comments are skipped."""
    name, data = "", []
    async for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and name:
            yield name, "\n".join(data)
            name, data = "", []


async def next_matching(stream: AsyncIterator[Event], name: str, text: str) -> str:
    """The data of the next `name` event that contains `text`."""
    async for found, data in stream:
        if found == name and text in data:
            return data
    raise AssertionError(f"the stream ended without a {name} event containing {text!r}")


def test_every_line_of_a_fragment_is_its_own_data_field() -> None:
    assert sse_event("run-jobs", "<tr>\n<td>1</td>\n</tr>") == (
        "event: run-jobs\ndata: <tr>\ndata: <td>1</td>\ndata: </tr>\n\n"
    )


async def test_a_run_page_follows_its_jobs_until_the_run_ends(
    served: str, factory: Factory, worker_db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING, processed=10, total=20)
    assert job.lease_token is not None
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        await sign_in(client)
        async with client.stream("GET", f"/runs/{run.id}/events") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            stream = events(response.aiter_lines())
            first = await next_matching(stream, "run-jobs", "10 of 20")
            assert 'value="10" max="20"' in first and "50%" in first

            await job_checkpoint(worker_db, job.id, job.lease_token, "cursor-2", 15)
            await next_matching(stream, "run-jobs", "15 of 20")

            await job_complete(worker_db, job.id, job.lease_token, processed=20)
            status = await next_matching(stream, "run-status", "completed")
            assert "Stop run" not in status
            last = await next_matching(stream, "run-jobs", "20 of 20")
            assert "100%" in last
            assert [e async for e in stream] == [("end", "finished")]


async def test_the_overview_streams_counts_and_runs_in_flight(
    served: str, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.PENDING)
    await factory.job(run, content_type=ContentType.BLOG_POST)
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        await sign_in(client)
        async with client.stream("GET", "/events/overview") as response:
            stream = events(response.aiter_lines())
            await next_matching(stream, "queue-counts", "Pending, due now")
            await next_matching(stream, "in-flight", f"Run {run.id}")
            second = await factory.run(status=RunStatus.RUNNING)
            await factory.job(second, status=JobStatus.RUNNING)
            data = await next_matching(stream, "in-flight", "2 of 2 open run(s)")
            assert f"Run {second.id}" in data


async def test_the_overview_streams_the_workers(served: str, db: Database) -> None:
    seat = WorkerSeat(
        name="box:5",
        host="box",
        pid=5,
        kinds=(JobKind.FETCH,),
        concurrency=2,
        heartbeat_every=timedelta(seconds=10),
    )
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        await sign_in(client)
        async with client.stream("GET", "/events/overview") as response:
            stream = events(response.aiter_lines())
            await next_matching(stream, "workers", "No worker is running")
            worker = await worker_register(db, seat)
            data = await next_matching(stream, "workers", "1 of 1 worker(s) alive")
            assert f'id="worker-{worker.id}" data-alive="yes"' in data
            assert "No worker is running" not in data


async def test_a_stream_ends_when_its_session_does(served: str, factory: Factory) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING, processed=1, total=2)
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        csrf = await sign_in(client)
        async with client.stream("GET", f"/runs/{run.id}/events") as response:
            stream = events(response.aiter_lines())
            await next_matching(stream, "run-jobs", "1 of 2")
            async with httpx.AsyncClient(base_url=served, cookies=client.cookies) as other:
                await other.post("/logout", data={"csrf": csrf}, headers={"Origin": served})
            assert [name async for name, _ in stream if name == "end"] == []
