"""An ASGI app under a real uvicorn in the test's event loop, on a free local port; and a free
local port for a server a test starts in a subprocess (`free_port`)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import uvicorn
from starlette.types import ASGIApp


class _Server(uvicorn.Server):
    """uvicorn, leaving the signals to pytest (a Ctrl-C stops the test run, not the server)."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@asynccontextmanager
async def serve_app(app: ASGIApp, *, graceful_seconds: int = 5) -> AsyncIterator[str]:
    """Serve `app` until the block ends; yields its base URL.

    The socket listens before uvicorn starts, so a client may connect at once: its
    connection waits in the backlog until the server accepts it; nobody polls for readiness.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", timeout_graceful_shutdown=graceful_seconds
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def free_port() -> int:
    """A local TCP port nothing listens on now, for a subprocess to bind."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
