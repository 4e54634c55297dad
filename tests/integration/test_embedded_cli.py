"""`smuves db migrate` with no SMUVES_DATABASE_URL starts the embedded PostgreSQL, and a command
that started it stops it on its way out when nothing else uses it: stopped by a signal too, and
whatever ended processes left registered."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from smuves_sync.db.migrations import discover, find_migrations_dir
from tests.support import SECRET, clean_env, run

SMUVES = (sys.executable, "-m", "smuves_sync.cli")


@pytest.mark.embedded
async def test_db_migrate_without_a_url_starts_the_embedded_server(tmp_path: Path) -> None:
    # The server runs as another user (pgserver) when the tests run as root: its data directory
    # is not under pytest's base directory, which pytest sessions keep private (0700).
    with tempfile.TemporaryDirectory(prefix="smv") as data:
        done = await run(
            sys.executable,
            "-c",
            "from smuves_sync.cli import main; main()",
            "db",
            "migrate",
            env=clean_env(SMUVES_DATA_DIR=str(Path(data) / "pg")),
            cwd=tmp_path,
        )
        assert done.code == 0, done.stderr
        expected = [f"applied {m.filename}" for m in discover(find_migrations_dir())]
        assert done.stdout.splitlines() == expected
        assert (Path(data) / "pg" / "PG_VERSION").exists()


def _postmasters(data_dir: Path) -> list[psutil.Process]:
    """The postgres servers running on `data_dir`."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "postgres" and str(data_dir) in (process.info["cmdline"] or []):
            found.append(process)
    return found


def _registered(data_dir: Path) -> list[int]:
    """The pids pgserver has registered as using `data_dir`."""
    registry = data_dir / ".handle_pids.json"
    return json.loads(registry.read_text()) if registry.exists() else []


@contextmanager
def _embedded_data_dir() -> Iterator[Path]:
    """A data directory for the embedded server; a server left running on it is ended."""
    with tempfile.TemporaryDirectory(prefix="smv") as data:
        data_dir = Path(data) / "pg"
        try:
            yield data_dir
        finally:
            for process in _postmasters(data_dir):
                process.terminate()


@pytest.mark.embedded
@pytest.mark.timeout(300)
async def test_smuves_serve_stopped_by_a_signal_stops_the_embedded_server(tmp_path: Path) -> None:
    with _embedded_data_dir() as data_dir:
        env = clean_env(
            SMUVES_DATA_DIR=str(data_dir),
            SMUVES_JWT_SECRET="a-secret-for-this-test-only-0123456789",
            SMUVES_JWT_AUDIENCE="authenticated",
            SMUVES_SECRET_KEY=SECRET,
        )
        for signum in (signal.SIGINT, signal.SIGTERM):
            serve = await asyncio.create_subprocess_exec(
                *SMUVES, "serve", "--port", "0", env=env, cwd=tmp_path,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            assert serve.stderr is not None
            async with asyncio.timeout(120):
                # uvicorn says so once it listens: the embedded server is up and migrated.
                while b"Uvicorn running on" not in (line := await serve.stderr.readline()):
                    assert line, f"smuves serve ended before serving ({await serve.wait()})"
                assert len(_postmasters(data_dir)) == 1
                assert _registered(data_dir) == [serve.pid]
                serve.send_signal(signum)
                await serve.communicate()
            assert serve.returncode != 0, signum
            assert _postmasters(data_dir) == [], signal.Signals(signum).name
            assert _registered(data_dir) == []


@pytest.mark.embedded
@pytest.mark.timeout(300)
async def test_a_pid_left_by_a_process_that_ended_keeps_no_server_running(tmp_path: Path) -> None:
    with _embedded_data_dir() as data_dir:
        env = clean_env(SMUVES_DATA_DIR=str(data_dir))
        first = await run(*SMUVES, "db", "migrate", env=env, cwd=tmp_path)
        assert first.code == 0, first.stderr
        # A process that used the server and ended without letting go (killed, say).
        ended = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
        await ended.wait()
        (data_dir / ".handle_pids.json").write_text(json.dumps([ended.pid]))

        again = await run(*SMUVES, "db", "migrate", env=env, cwd=tmp_path)
        assert again.code == 0, again.stderr
        assert _postmasters(data_dir) == []
        assert _registered(data_dir) == []
