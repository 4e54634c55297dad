"""`smuves worker` processes for benchmarks: logged in as the workers' own login, as in
production, and watched, so that a benchmark whose worker dies or stalls stops with the
worker's exit code and the last lines of its output instead of waiting for ever.

    login = await worker_login(db_url)             # smuves_worker_login on db_url's database
    env = worker_env(login, SMUVES_HUBSPOT_BASE_URL=fake.base_url, SMUVES_SECRET_KEY=key)
    workers = Workers([start_worker(env, logs / f"worker{n}.log", "--kinds", "fetch")
                       for n in range(2)])
    try:
        await workers.ready()                      # each has logged that it is up
        while not done:
            workers.check(progress=processed)      # WorkerFailed: one exited, or no progress
    finally:
        reaped = await workers.stop()              # SIGTERM; exit code, CPU and peak RSS of each

A worker gets no SMUVES_DATABASE_URL, as on a worker host: only SMUVES_WORKER_DATABASE_URL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from smuves_sync.db import DbRole
from smuves_sync.db.migrations import set_login_passwords
from smuves_sync.settings import Settings

# A worker logs this once it is up and idle ("worker host:pid: kinds fetch, concurrency 3").
READY_MARKER = ": kinds "
READY_SECONDS = 60.0
STALL_SECONDS = 120.0
STOP_SECONDS = 30.0
TAIL_LINES = 20


class WorkerFailed(RuntimeError):
    """A worker process exited while a benchmark needed it, or the benchmark made no progress."""


async def worker_login(db_url: str, configured: str | None = None) -> str:
    """The URL worker processes of the database at `db_url` log in with: smuves_worker_login.

    `configured` (default: this environment's SMUVES_WORKER_DATABASE_URL) gives the user and
    password, and its password is set on the login as `smuves db migrate` sets it. Without it
    the login gets `db_url`'s password, if any (the test harness gives the logins the test
    server's), and none is set: a server that trusts local connections (the test server, the
    embedded one) asks for none."""
    configured = configured or os.environ.get(DbRole.WORKER.url_variable) or None
    params = conninfo_to_dict(db_url)
    params["user"] = DbRole.WORKER.login
    if configured:
        own = conninfo_to_dict(configured)
        params["user"] = own.get("user") or DbRole.WORKER.login
        params.pop("password", None)
        if own.get("password"):
            params["password"] = own["password"]
    url = make_conninfo("", **params)
    if configured:
        logins = Settings(database_url=db_url, api_database_url=None, worker_database_url=url)
        await set_login_passwords(db_url, logins)
    return url


def worker_env(login: str, **values: str) -> dict[str, str]:
    """This process's environment without its SMUVES_ settings (and no env file, so that a
    playground's .env stays out), with the worker login `login` and `values`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env.update({"SMUVES_ENV_FILE": "", DbRole.WORKER.url_variable: login, **values})
    return env


@dataclass(frozen=True)
class Reaped:
    """A process that ended: its exit code (-N: killed by signal N), CPU and peak RSS."""

    code: int
    cpu_s: float
    peak_rss_mb: float


def exit_code(process: subprocess.Popen[bytes]) -> int | None:
    """The exit code of `process` if it has ended, else None; it is not reaped (its resource
    usage stays readable by `reap`)."""
    if process.returncode is not None:
        return process.returncode
    found = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    if found is None or found.si_pid == 0:
        return None
    return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status


def reap(process: subprocess.Popen[bytes]) -> Reaped:
    """Wait for `process` to end and reap it (Linux reports ru_maxrss in KB)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # keeps Popen from waiting again
    return Reaped(process.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines of the file at `path`, indented ("(no output)" if none)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "    (no output)"
    return "\n".join(f"    {line}" for line in text.splitlines()[-lines:]) or "    (no output)"


@dataclass
class Worker:
    """A `smuves worker` process and the file its stdout and stderr go to."""

    process: subprocess.Popen[bytes]
    log: Path

    def is_up(self) -> bool:
        """Whether it has logged that it is up (and idle)."""
        return self.log.exists() and READY_MARKER in self.log.read_text(errors="replace")

    def describe(self) -> str:
        """Which worker this is, and the last lines it wrote."""
        return f"worker pid {self.process.pid}; the last lines of {self.log}:\n{tail(self.log)}"


def start_worker(
    env: Mapping[str, str], log: Path, *args: str, process_group: int | None = None
) -> Worker:
    """`smuves worker ARGS…` with `env`, its output (stderr included) into `log`."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "smuves_sync.cli", "worker", *args],
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            process_group=process_group,
        )
    return Worker(process, log)


class Workers:
    """Worker processes a benchmark waits on; `check` raises `WorkerFailed` rather than let
    it wait for a worker that is gone, or for progress that does not come."""

    def __init__(
        self,
        workers: Sequence[Worker],
        *,
        stall_seconds: float = STALL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.workers = list(workers)
        self.stall_seconds = stall_seconds
        self.clock = clock
        self._progress: object = None
        self._since = clock()

    def check(self, progress: object = None) -> None:
        """`WorkerFailed` if a worker has exited, or if `progress` (anything comparable that
        moves while the work does) has stayed the same for `stall_seconds`."""
        self._check_exits()
        now = self.clock()
        if progress != self._progress:
            self._progress, self._since = progress, now
        elif now - self._since > self.stall_seconds:
            logs = "\n".join(worker.describe() for worker in self.workers)
            raise WorkerFailed(
                f"no progress for {self.stall_seconds:.0f} s (still {progress!r}) while "
                f"the workers ran:\n{logs}"
            )

    def _check_exits(self) -> None:
        for number, worker in enumerate(self.workers):
            code = exit_code(worker.process)
            if code is not None:
                raise WorkerFailed(
                    f"worker {number + 1} of {len(self.workers)} exited with code {code} "
                    f"while the benchmark waited on it: {worker.describe()}"
                )

    async def ready(self, timeout: float = READY_SECONDS) -> None:
        """Until every worker has logged that it is up; `WorkerFailed` if one exits first or
        they are not all up after `timeout` seconds."""
        deadline = self.clock() + timeout
        while waiting := [w for w in self.workers if not w.is_up()]:
            self._check_exits()
            if self.clock() > deadline:
                raise WorkerFailed(
                    f"{len(waiting)} worker(s) not up after {timeout:.0f} s: "
                    + "\n".join(w.describe() for w in waiting)
                )
            await asyncio.sleep(0.1)
        self._progress, self._since = None, self.clock()

    async def stop(self, timeout: float = STOP_SECONDS) -> list[Reaped]:
        """SIGTERM to each worker, SIGKILL to any still running after `timeout` seconds (its
        grace period is shorter); each reaped."""
        for worker in self.workers:
            if exit_code(worker.process) is None:
                worker.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
            exit_code(w.process) is None for w in self.workers
        ):
            await asyncio.sleep(0.05)
        for worker in self.workers:
            if exit_code(worker.process) is None:
                worker.process.kill()
        return [reap(worker.process) for worker in self.workers]
