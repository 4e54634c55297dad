"""End-to-end harness: `smuves` subprocesses, the fake HubSpot in a subprocess, a real Postgres.

Fixtures and helpers:

    fake_hubspot(specs, config) -> FakeHubSpotProcess     started in a subprocess, stopped after
    env = smuves_env(db_url, fake.base_url, SMUVES_FETCH_LEASE_SECONDS="2")  # tests.support
    proc = await spawn(env, "worker", "--burst", log=tmp_path / "w1.log")   # asyncio Process
    result = await smuves(env, "sync", "7001")            # tests.support: code, stdout, stderr
    await eventually(check, timeout=60)                   # tests.support: poll with a deadline

Nothing here sleeps to wait: `eventually` polls a condition until it holds or the deadline
passes (then the test fails), and subprocesses are awaited.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from smuves_sync.testing.fake_hubspot import (
    FakeHubSpotProcess,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
)

StartFake = Callable[..., FakeHubSpotProcess]


@pytest.fixture
def fake_hubspot() -> Iterator[StartFake]:
    """Start fake HubSpot servers in subprocesses; all stop when the test ends."""
    with ExitStack() as stack:

        def start(
            specs: list[PortalSpec], config: ServerConfig | None = None
        ) -> FakeHubSpotProcess:
            return stack.enter_context(serve_in_subprocess(specs, config or ServerConfig()))

        yield start


# Processes started by `spawn` in the running test; whatever still runs at its end is killed,
# so a failing test leaves no worker behind.
_SPAWNED: list[asyncio.subprocess.Process] = []


@pytest.fixture(autouse=True)
async def _reap_spawned(db_url: str, fake_hubspot: StartFake) -> AsyncIterator[None]:
    # Depends on the database and the fakes so that it is torn down before them.
    yield
    while _SPAWNED:
        proc = _SPAWNED.pop()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def spawn(env: dict[str, str], *args: str, log: Path) -> asyncio.subprocess.Process:
    """Start `smuves ARGS…` with stdout and stderr going to `log` (killed at the test's end)."""
    with log.open("ab") as sink:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "smuves_sync.cli", *args, env=env, stdout=sink, stderr=sink
        )
    _SPAWNED.append(proc)
    return proc


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
