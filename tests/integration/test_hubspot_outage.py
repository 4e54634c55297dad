"""HubSpot unreachable on a bad night: jobs wait it out on one outage state, spending no
attempt; past the bound they fail in words a person acts on, the run's owner told once; and
`smuves sync` shows one status line instead of a warning per retry.

Through the real queue, runner and fake HubSpot; HubSpot's clock runs a hundred times fast
(`FastClock`), so an outage of minutes passes in seconds and nothing sleeps its length."""

from __future__ import annotations

import asyncio
import io
import logging
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from smuves_sync.cli.common import ExitCode
from smuves_sync.cli.sync import configure_logging, sync_portal
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule
from smuves_sync.testing.fake_hubspot.runner import serve_in_thread
from smuves_sync.workers.runner import Runner
from tests.support import Sync, eventually, fake_portal, query
from tests.support.sync import sync_settings

SPEC = fake_portal(7301, "230,120,160,0,0", seed=4, archived_share=0.1)
TYPES = [ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST]
pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)

SPEED = 100.0


class FastClock:
    """HubSpot's clock, running `SPEED` times as fast as the real one: concurrent sleepers
    overlap as they would for real, a minute passing in 0.6 s."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._start = datetime.now(UTC)

    def monotonic(self) -> float:
        return (time.monotonic() - self._started) * SPEED

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self.monotonic())

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / SPEED)


def closed_port() -> int:
    """A local port nobody listens on (yet): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def hubspot_back(sync: Sync, port: int) -> Iterator[None]:
    """HubSpot answering again, on the port that refused connections."""
    with serve_in_thread(sync.fake, port=port):
        yield


def unreachable_settings(sync: Sync, port: int, **overrides: object) -> Settings:
    return sync_settings(sync.db_url, f"http://127.0.0.1:{port}", **overrides)


async def test_jobs_wait_out_hubspot_unreachable_spending_no_attempt_and_then_complete(
    sync: Sync,
) -> None:
    portal = await sync.plant_portal()
    port = closed_port()
    settings = unreachable_settings(sync, port)
    limits = RateLimitRegistry(FastClock())
    started = await start_fetch(sync.worker_db, portal, TYPES)
    runner = Runner(
        sync.worker_db, settings, kinds=[JobKind.FETCH], concurrency=3, burst=True, limits=limits
    )
    working = asyncio.create_task(runner.run())

    # Ten minutes of HubSpot's time unreachable: the old client gave a job up in seconds.
    def lasted() -> bool:
        status = limits.outage.status()
        return status is not None and status.lasted > 600

    await eventually(lasted, what="an outage of ten minutes")
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert [(j["status"], j["attempts"]) for j in jobs] == [("running", 1)] * 3
    with hubspot_back(sync, port):
        stats = await asyncio.wait_for(working, 60)

    assert (stats.completed, stats.failed, stats.parked) == (3, 0, 0)
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert [(j["status"], j["attempts"], j["last_error"]) for j in jobs] == [
        ("completed", 1, None)
    ] * 3
    for content_type in TYPES:
        assert await sync.stored(portal, content_type) == sync.truth(portal, content_type)
    told = await query(sync.db, "sync_notifications_of_run", run_id=started.run.id)
    assert [n["kind"] for n in told] == ["run_completed"]


async def test_a_5xx_storm_is_waited_out_with_one_probe_at_a_time(sync: Sync) -> None:
    portal = await sync.plant_portal()
    sync.fake.set_faults((FaultRule(FaultKind.STATUS, status=503, share=1.0),))
    limits = RateLimitRegistry(FastClock())
    await start_fetch(sync.worker_db, portal, TYPES)
    runner = Runner(
        sync.worker_db,
        sync.settings,
        kinds=[JobKind.FETCH],
        concurrency=3,
        burst=True,
        limits=limits,
    )
    working = asyncio.create_task(runner.run())

    def lasted() -> bool:
        status = limits.outage.status()
        return status is not None and status.lasted > 300

    await eventually(lasted, what="a storm of five minutes")
    storm = sync.fake.stats(portal).by_status.get(503, 0)
    sync.fake.set_faults(())
    stats = await asyncio.wait_for(working, 60)

    assert (stats.completed, stats.failed) == (3, 0)
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    assert {(j["status"], j["attempts"]) for j in jobs} == {("completed", 1)}
    # Five minutes: the three jobs' first requests, then one probe at a time, each further
    # out (0.5 s, 1 s, 2 s … 30 s): a dozen or so, not three jobs hammering.
    assert 3 < storm <= 3 + 20
    for content_type in TYPES:
        assert await sync.stored(portal, content_type) == sync.truth(portal, content_type)


async def test_past_the_outage_bound_jobs_fail_in_words_and_the_run_is_told_once(
    sync: Sync,
) -> None:
    portal = await sync.plant_portal()
    settings = unreachable_settings(sync, closed_port(), hubspot_outage_max_seconds=600)
    started = await start_fetch(sync.worker_db, portal, TYPES)
    stats = await asyncio.wait_for(
        Runner(
            sync.worker_db,
            settings,
            kinds=[JobKind.FETCH],
            concurrency=3,
            burst=True,
            limits=RateLimitRegistry(FastClock()),
        ).run(),
        120,
    )

    assert stats.failed == 3
    jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
    note = (
        "HubSpot was unreachable for 10 min (connection refused) — check HubSpot's status page "
        f"(status.hubspot.com) or the network; run `smuves sync {portal}` again"
    )
    public = (
        "HubSpot was unreachable for 10 min (connection refused): check HubSpot's status page "
        "(status.hubspot.com) or the network, then start the fetch again"
    )
    assert [(j["status"], j["attempts"]) for j in jobs] == [("failed", 1)] * 3
    assert {j["last_error"] for j in jobs} == {note}
    shown = await query(sync.db, "outage_public_errors_of_portal", portal_id=portal)
    assert {j["last_error_public"] for j in shown} == {public}
    # What each failed type asked of HubSpot is told, not 0: its count, then its probes.
    reads = await query(sync.db, "outage_fetch_reads_of_run", run_id=started.run.id)
    assert len(reads) == 3 and all(r["requests"] >= 1 for r in reads)
    # One note for the run, saying once why; nothing said per job, nothing contradicting it.
    [told] = await query(sync.db, "sync_notifications_of_run", run_id=started.run.id)
    assert told["kind"] == "run_failed"
    assert told["message"].count("HubSpot was unreachable for 10 min (connection refused)") == 1
    assert "tried again" not in told["message"]


async def test_smuves_sync_shows_one_status_line_while_hubspot_is_unreachable(
    sync: Sync, caplog: pytest.LogCaptureFixture
) -> None:
    portal = await sync.plant_portal()
    port = closed_port()
    settings = unreachable_settings(sync, port, count_timeout_seconds=0)
    printed = io.StringIO()
    console = Console(file=printed, width=160, force_terminal=True)
    configure_logging(console)
    syncing = asyncio.create_task(
        sync_portal(
            settings,
            portal,
            [str(t) for t in TYPES],
            wait=True,
            concurrency=3,
            console=console,
            limits=RateLimitRegistry(FastClock()),
        )
    )

    def status_shown() -> bool:
        return printed.getvalue().count("HubSpot unreachable since") >= 3

    await eventually(status_shown, what="the status line, drawn a few times")
    with hubspot_back(sync, port):
        code, _ = await asyncio.wait_for(syncing, 60)
    logging.getLogger().handlers.clear()

    assert code is ExitCode.OK
    output = printed.getvalue()
    # The status line is the live display's, redrawn in place; no log line per retry.
    warnings = [line for line in output.splitlines() if "WARNING" in line]
    assert len(warnings) <= 2, warnings  # at most: it is unreachable; it is back
    assert "retrying" not in output and "ConnectError" not in output
    assert "next try in" in output
    for content_type in TYPES:
        assert await sync.stored(portal, content_type) == sync.truth(portal, content_type)
