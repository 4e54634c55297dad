"""The benchmarks' worker processes (smuves_sync.testing.worker_processes): a worker that exits
or a run that stops moving ends the wait with the exit code and the worker's last lines; the
workers log in as smuves_worker_login. Stand-in workers are small Python processes; the
clock is injected, nothing sleeps to wait for time to pass."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from smuves_sync.testing.worker_processes import (
    Worker,
    WorkerFailed,
    Workers,
    worker_env,
    worker_login,
)


def stand_in(log: Path, code: str) -> Worker:
    """A process running `code`, its output into `log`, as `start_worker` starts one."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=out, stderr=subprocess.STDOUT
        )
    return Worker(process, log)


def ended(worker: Worker) -> None:
    """Until the process has exited (it stays unreaped, as `Workers` wants it)."""
    os.waitid(os.P_PID, worker.process.pid, os.WEXITED | os.WNOWAIT)


UP = "print('worker host:1: kinds fetch, concurrency 3', flush=True); "


async def test_a_worker_that_exits_is_named_with_its_exit_code_and_last_lines(
    tmp_path: Path,
) -> None:
    code = UP + "import sys; print('lost the database', file=sys.stderr); sys.exit(3)"
    worker = stand_in(tmp_path / "w.log", code)
    workers = Workers([worker])
    await workers.ready()
    ended(worker)

    with pytest.raises(WorkerFailed) as failed:
        workers.check(progress=1)

    message = str(failed.value)
    assert "worker 1 of 1 exited with code 3" in message
    assert "lost the database" in message and str(tmp_path / "w.log") in message
    assert [r.code for r in await workers.stop()] == [3]


async def test_a_worker_that_exits_before_it_is_up_ends_the_wait_for_it(tmp_path: Path) -> None:
    code = "import sys; print('SMUVES_WORKER_DATABASE_URL is not set'); sys.exit(2)"
    worker = stand_in(tmp_path / "w.log", code)
    ended(worker)
    workers = Workers([worker])

    with pytest.raises(WorkerFailed, match=r"(?s)exited with code 2.*is not set"):
        await workers.ready()
    assert [r.code for r in await workers.stop()] == [2]


async def test_no_progress_for_the_stall_time_ends_the_wait_and_stop_ends_the_workers(
    tmp_path: Path,
) -> None:
    now = [0.0]
    worker = stand_in(tmp_path / "w.log", UP + "import time; time.sleep(120)")
    workers = Workers([worker], stall_seconds=60, clock=lambda: now[0])
    await workers.ready()

    workers.check(progress=10)
    now[0] = 59.0
    workers.check(progress=10)
    now[0] = 100.0
    workers.check(progress=11)  # it moved: the stall time starts again
    now[0] = 161.0
    with pytest.raises(WorkerFailed, match=r"no progress for 60 s \(still 11\)"):
        workers.check(progress=11)

    assert [r.code for r in await workers.stop()] == [-signal.SIGTERM]


async def test_the_workers_log_in_as_smuves_worker_login_with_nothing_else(
    pg_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SMUVES_WORKER_DATABASE_URL", raising=False)
    monkeypatch.setenv("SMUVES_DATABASE_URL", pg_server)
    db_url = make_conninfo(pg_server, dbname="smuves_bench_x")

    login = await worker_login(db_url)
    env = worker_env(login, SMUVES_SECRET_KEY="k")

    params = conninfo_to_dict(login)
    assert (params["user"], params["dbname"]) == ("smuves_worker_login", "smuves_bench_x")
    smuves = {k: v for k, v in env.items() if k.startswith("SMUVES_")}
    assert smuves == {
        "SMUVES_ENV_FILE": "",
        "SMUVES_WORKER_DATABASE_URL": login,
        "SMUVES_SECRET_KEY": "k",
    }
