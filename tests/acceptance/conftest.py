"""End-to-end harness: `smuves` subprocesses, the fake HubSpot in a subprocess, a real Postgres.

Fixtures and helpers:

    fake_hubspot(specs, config) -> FakeHubSpotProcess     started in a subprocess, stopped after
    env = smuves_env(db_url, fake.base_url, SMUVES_FETCH_LEASE_SECONDS="2")
    proc = await spawn(env, "worker", "--burst", log=tmp_path / "w1.log")   # asyncio Process
    result = await smuves(env, "sync", "7001")            # runs to the end: code, stdout, stderr
    await eventually(check, timeout=60)                   # poll the database with a deadline

Nothing here sleeps to wait: `eventually` polls a condition until it holds or the deadline
passes (then the test fails), and subprocesses are awaited.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from smuves_sync.testing.fake_hubspot import (
    FakeHubSpotProcess,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
)
from tests.integration.sync_helpers import SECRET

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


def smuves_env(db_url: str, base_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `smuves` subprocess: this test's database and fake, quick timings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env.update(
        {
            "SMUVES_ENV_FILE": "",  # a playground .env in the checkout stays out of the tests
            "SMUVES_DATABASE_URL": db_url,
            "SMUVES_HUBSPOT_BASE_URL": base_url,
            "SMUVES_SECRET_KEY": SECRET,
            "SMUVES_POLL_INTERVAL_SECONDS": "0.2",
            "SMUVES_BACKOFF_BASE_SECONDS": "0.05",
            "SMUVES_BACKOFF_MAX_SECONDS": "0.5",
            "SMUVES_HUBSPOT_MAX_RETRIES": "1",
            "SMUVES_SHUTDOWN_GRACE_SECONDS": "5",
            "COLUMNS": "200",
        }
    )
    env.update(extra)
    return env


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


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


async def smuves(env: dict[str, str], *args: str, timeout: float = 120) -> Finished:
    """Run `smuves ARGS…` to the end."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smuves_sync.cli",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return Finished(proc.returncode, out.decode(), err.decode())


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


async def eventually(
    check: Callable[[], Awaitable[bool]], *, timeout: float = 60, every: float = 0.1
) -> None:
    """Poll `check` until it returns True; fail the test when `timeout` seconds pass."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        await asyncio.sleep(every)
