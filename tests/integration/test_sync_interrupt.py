"""Ctrl-C during `smuves sync`: the first says it is stopping and hands the running jobs back
at once (not after the shutdown grace period), for a worker to finish; a second one stops the
run, its open jobs ending stopped."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from smuves_sync.db import Database
from tests.support import Sync, eventually, fake_portal, query, smuves

# Slow enough to be interrupted mid-listing: 30 pages of site pages, each answered late.
SPEC = fake_portal(4300, "3000,0,0,0,0", seed=5)
pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None, latency_ms=200)


class SyncProcess:
    """A `smuves sync` subprocess, read line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[str] = []

    async def line_with(self, text: str) -> str:
        """The next line of its output that contains `text`."""
        assert self.process.stdout is not None
        async with asyncio.timeout(60):
            while True:
                line = (await self.process.stdout.readline()).decode()
                assert line, f"the sync ended without saying {text!r}: {self.seen}"
                self.seen.append(line)
                if text in line:
                    return line

    async def finish(self) -> tuple[int, str]:
        """Its exit code and the rest of its output."""
        async with asyncio.timeout(60):
            rest, _ = await self.process.communicate()
        assert self.process.returncode is not None
        return self.process.returncode, "".join(self.seen) + rest.decode()


@asynccontextmanager
async def syncing(sync: Sync) -> AsyncIterator[tuple[SyncProcess, int]]:
    """`smuves sync` of the portal's site pages, its fetch job running; the run's id. The
    grace period is an hour: only a hand-back at once ends the sync within the test."""
    portal = await sync.plant_portal()
    env = sync.env(SMUVES_SHUTDOWN_GRACE_SECONDS="3600", COLUMNS="200")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "smuves_sync.cli", "sync", str(portal), "--types", "site_page",
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:

        async def running() -> int:
            jobs = await query(sync.db, "sync_jobs_of_portal", portal_id=portal)
            assert jobs and jobs[0]["status"] == "running", f"jobs: {jobs}"
            run_id: int = jobs[0]["run_id"]
            return run_id

        yield SyncProcess(process), await eventually(running, 60, what="the fetch job running")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _job_and_run(db: Database, run_id: int) -> tuple[str, str]:
    [job] = await query(db, "sync_jobs_of_portal", portal_id=4300)
    [run] = await query(db, "sync_runs_of_portal", portal_id=4300)
    assert (job["run_id"], run["id"]) == (run_id, run_id)
    return job["status"], run["status"]


async def test_ctrl_c_hands_the_running_jobs_back_at_once(sync: Sync) -> None:
    async with syncing(sync) as (smuves_sync, run_id):
        smuves_sync.process.send_signal(signal.SIGINT)
        said = await smuves_sync.line_with("stopping:")
        assert f"stopping: handing back 1 job… (Ctrl-C again stops run {run_id})" in said
        code, out = await smuves_sync.finish()
    assert code == 1, out
    assert f"run {run_id} is not finished" in out
    # Handed back for a worker: pending again, no attempt spent on it, the run still open.
    job_status, run_status = await _job_and_run(sync.db, run_id)
    assert job_status == "pending" and run_status in ("pending", "running")
    [job] = await query(sync.db, "sync_jobs_of_portal", portal_id=4300)
    assert job["attempts"] == 0 and job["processed"] < SPEC.site_pages


async def test_a_second_ctrl_c_stops_the_run(sync: Sync) -> None:
    async with syncing(sync) as (smuves_sync, run_id):
        # The job's row is held here, so the hand-back waits until both Ctrl-Cs are in.
        async with sync.db.transaction() as tx:
            await query(tx, "sync_lock_jobs_of_run", run_id=run_id)
            smuves_sync.process.send_signal(signal.SIGINT)
            await smuves_sync.line_with("stopping: handing back 1 job")
            smuves_sync.process.send_signal(signal.SIGINT)
            said = await smuves_sync.line_with(f"stopping run {run_id}")
            assert "its open jobs end stopped" in said
        code, out = await smuves_sync.finish()
    assert code == 1, out
    assert f"run {run_id} stopped" in out
    assert await _job_and_run(sync.db, run_id) == ("stopped", "stopped")


async def test_the_next_sync_offers_the_run_left_with_no_worker_and_takes_it_over(
    sync: Sync,
) -> None:
    async with syncing(sync) as (smuves_sync, run_id):
        smuves_sync.process.send_signal(signal.SIGINT)
        await smuves_sync.line_with("stopping:")
        code, out = await smuves_sync.finish()
    assert code == 1, out
    env = sync.env(COLUMNS="200")

    # Nobody at a terminal, nothing said: it says how, and starts nothing beside the run.
    asked = await smuves(env, "sync", "4300", "--types", "site_page")
    assert asked.code == 3, asked.stdout + asked.stderr
    assert (
        f"run {run_id} (site_page) of portal 4300 is waiting with no worker: "
        "`smuves sync 4300 --take-over` works it here"
    ) in asked.stdout
    job_status, run_status = await _job_and_run(sync.db, run_id)
    assert job_status == "pending" and run_status in ("pending", "running")

    taken = await smuves(env, "sync", "4300", "--types", "site_page", "--take-over")
    assert taken.code == 0, taken.stdout + taken.stderr
    assert f"run {run_id}: taking it over, working it here" in taken.stdout
    assert await _job_and_run(sync.db, run_id) == ("completed", "completed")
    stored = await query(sync.db, "sync_content_of_portal", portal_id=4300)
    assert len(stored) == SPEC.site_pages
