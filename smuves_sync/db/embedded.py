"""The embedded PostgreSQL (the ``pgserver`` package) used when ``SMUVES_DATABASE_URL`` is unset.

    async with embedded_server(settings.data_dir) as conninfo:
        ...

The server starts on first use (about 1.5 s; initdb on the very first) and listens on a unix
socket only. Handles are counted across processes by pgserver: the server stops when the last
process using the data directory lets go. Keep the data directory's path short: the socket
lives next to it when the path allows.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _pgserver() -> Any:
    # Imported on demand: most runs use a configured URL. pgserver asks platformdirs for a
    # runtime directory at import time, which warns when XDG_RUNTIME_DIR is unset (containers,
    # cron); the fallback it picks is fine.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        return importlib.import_module("pgserver")


def _start(pgserver: Any, data_dir: Path) -> Any:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    server.__enter__()  # counts this handle; the matching __exit__ may stop the server
    return server


def _stop(server: Any) -> None:
    server.__exit__(None, None, None)


@asynccontextmanager
async def embedded_server(data_dir: Path) -> AsyncIterator[str]:
    """Start (or join) the embedded server under `data_dir` and yield its connection URI."""
    data_dir = data_dir.expanduser().resolve()
    log.info("starting the embedded PostgreSQL under %s", data_dir)
    server = await asyncio.to_thread(_start, _pgserver(), data_dir)
    try:
        yield str(server.get_uri())
    finally:
        await asyncio.to_thread(_stop, server)
