"""The embedded PostgreSQL (the ``pgserver`` package) used when ``SMUVES_DATABASE_URL`` is unset.

    async with embedded_server(settings.data_dir) as conninfo:
        ...

The server starts on first use (about 1.5 s; initdb on the very first) and listens on a unix
socket only. Handles are counted across processes by pgserver, in a registry of the pids
using the data directory (``.handle_pids.json`` in it): the process that lets go and finds
only itself registered stops the server. So that the last one out always does:

* pids of processes that have ended are dropped from the registry before joining and before
  letting go (a process killed outright, or by a signal, never took its pid out, and the
  server would never stop again);
* while a command holds the server, SIGTERM and SIGHUP (when nothing else handles them; by
  default they end the process on the spot) exit it as ``SystemExit`` does, so it lets go.
  ``smuves serve`` and ``smuves dashboard`` meet this: uvicorn re-raises the signal it
  stopped on once it has shut down.

Keep the data directory's path short: the socket lives next to it when the path allows.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import signal
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

log = logging.getLogger(__name__)

# pgserver's registry of the pids using a data directory, in the data directory.
_HANDLES = ".handle_pids.json"
# Signals that end a process by default, which a person or a supervisor sends to stop one.
_STOPPING = (signal.SIGTERM, signal.SIGHUP)


def _pgserver() -> Any:
    # Imported on demand: most runs use a configured URL. pgserver asks platformdirs for a
    # runtime directory at import time, which warns when XDG_RUNTIME_DIR is unset (containers,
    # cron); the fallback it picks is fine.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        return importlib.import_module("pgserver")


def _running(psutil: Any, pid: int) -> bool:
    """True when process `pid` exists and has not ended (a zombie has). A pid reused by
    another process since counts as running: the server is then kept, never stopped early."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def forget_ended_handles(data_dir: Path) -> list[int]:
    """Drop the pids of processes that have ended from the registry of `data_dir`'s handles,
    under pgserver's lock; the pids dropped."""
    pgserver = _pgserver()
    registry = importlib.import_module("pgserver.utils").DiskList(data_dir / _HANDLES)
    psutil = importlib.import_module("psutil")  # pgserver's own dependency
    with pgserver.PostgresServer._lock:
        pids: list[int] = registry.get()
        ended = [pid for pid in pids if not _running(psutil, pid)]
        if ended:
            registry.put([pid for pid in pids if pid not in ended])
    if ended:
        log.info("forgot handles of ended processes %s on %s", ended, data_dir)
    return ended


def _start(pgserver: Any, data_dir: Path) -> Any:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    if data_dir.exists():
        forget_ended_handles(data_dir)
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    server.__enter__()  # counts this handle; the matching __exit__ may stop the server
    return server


def _stop(server: Any) -> None:
    forget_ended_handles(server.pgdata)
    server.__exit__(None, None, None)


def _exit_on_signal(signum: int, _frame: FrameType | None) -> NoReturn:
    raise SystemExit(128 + signum)  # the shell's status for "ended by signal N"


@contextmanager
def _stopping_signals_exit() -> Iterator[None]:
    """While the block runs, stopping signals left at their default exit through SystemExit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [s for s in _STOPPING if signal.getsignal(s) is signal.SIG_DFL]
    for signum in taken:
        signal.signal(signum, _exit_on_signal)
    try:
        yield
    finally:
        for signum in taken:
            if signal.getsignal(signum) is _exit_on_signal:
                signal.signal(signum, signal.SIG_DFL)


@asynccontextmanager
async def embedded_server(data_dir: Path) -> AsyncIterator[str]:
    """Start (or join) the embedded server under `data_dir` and yield its connection URI."""
    data_dir = data_dir.expanduser().resolve()
    log.info("starting the embedded PostgreSQL under %s", data_dir)
    with _stopping_signals_exit():
        server = await asyncio.to_thread(_start, _pgserver(), data_dir)
        try:
            yield str(server.get_uri())
        finally:
            await asyncio.to_thread(_stop, server)
