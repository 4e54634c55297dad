"""End-to-end harness: `smuves` subprocesses, the fake HubSpot in a subprocess, a real Postgres.

    @pytest.mark.hubspot(SPEC, ten_second_limit=None)     # the fake's portals and ServerConfig
    async def test_x(sync: ProcessSync, spawn: Spawn, tmp_path: Path) -> None:
        env = sync.env(SMUVES_POLL_INTERVAL_SECONDS="0.5")
        proc = await spawn(env, "worker", "--burst", log=tmp_path / "w1.log")  # asyncio Process
        result = await smuves(env, "sync", "7001")        # runs to the end: code, stdout, stderr
        await eventually(check, timeout=60)               # poll the database with a deadline

Here the `hubspot` fixture (and so `sync`) runs the fake in a subprocess rather than a thread.
Nothing waits by sleeping: `eventually` polls a condition until it holds or the deadline
passes (then the test fails), and subprocesses are awaited.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from smuves_sync.testing.fake_hubspot import FakeHubSpotProcess, serve_in_subprocess
from tests.support import Served, SyncBed
from tests.support.sync import hubspot_setup

ProcessSync = SyncBed[FakeHubSpotProcess]
Spawn = Callable[..., Awaitable[asyncio.subprocess.Process]]


@pytest.fixture
def hubspot(request: pytest.FixtureRequest) -> Iterator[Served[FakeHubSpotProcess]]:
    """The fake HubSpot of the test's `hubspot` marker, in a subprocess."""
    specs, config = hubspot_setup(request)
    with serve_in_subprocess(specs, config) as fake:
        yield Served(fake, fake.base_url, specs)


@pytest.fixture
async def spawn(sync: ProcessSync) -> AsyncIterator[Spawn]:
    """Start `smuves ARGS…` with stdout and stderr going to `log`. Whatever still runs at the
    test's end is killed, before the fake and the database go: a failing test leaves no worker
    behind."""
    started: list[asyncio.subprocess.Process] = []

    async def start(env: dict[str, str], *args: str, log: Path) -> asyncio.subprocess.Process:
        with log.open("ab") as sink:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "smuves_sync.cli", *args, env=env, stdout=sink, stderr=sink
            )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def stop(proc: asyncio.subprocess.Process, timeout: float = 30) -> int:
    """SIGTERM a subprocess and wait for it (killed if it overstays)."""
    if proc.returncode is None:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode
