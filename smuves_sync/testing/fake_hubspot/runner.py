"""Run the fake on 127.0.0.1: in a background thread of this process, or as a subprocess.

    with serve_in_thread(fake) as base_url: ...          # `fake` is the control handle
    with serve_in_subprocess(specs, config) as fake: ... # FakeHubSpotProcess: fake.base_url

Both bind the listening socket before they hand out the URL, so the server accepts
connections from the first moment; nothing polls or sleeps waiting for it.
"""

from __future__ import annotations

import asyncio
import select
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
from smuves_sync.testing.fake_hubspot.remote import FakeHubSpotRemote
from smuves_sync.testing.fake_hubspot.spec import PortalSpec, ServerConfig, encode_setup

LAUNCHER = Path(__file__).resolve().parents[3] / "scripts" / "fake_hubspot.py"
_STOP_TIMEOUT_S = 10.0


def bind_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket; port 0 picks a free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(256)
    return sock


def make_server(
    fake: FakeHubSpot, log_level: str = "warning", *, configure_logging: bool = False
) -> uvicorn.Server:
    """A uvicorn server for the fake (no lifespan, no access log)."""
    config = uvicorn.Config(
        fake.app(),
        log_level=log_level,
        access_log=False,
        lifespan="off",
        # In-process, leave the host's logging configuration alone.
        log_config=uvicorn.config.LOGGING_CONFIG if configure_logging else None,
    )
    return uvicorn.Server(config)


@contextmanager
def serve_in_thread(fake: FakeHubSpot, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve `fake` from a background thread with its own event loop; yields the base URL."""
    sock = bind_socket(host, port)
    server = make_server(fake)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])),
        name="fake-hubspot",
        daemon=True,
    )
    thread.start()
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(_STOP_TIMEOUT_S)
        sock.close()
        if thread.is_alive():
            raise RuntimeError("the fake HubSpot server thread did not stop")


class FakeHubSpotProcess(FakeHubSpotRemote):
    """A fake running in a subprocess, driven through its /_fake admin endpoints."""

    def __init__(self, process: subprocess.Popen[str], base_url: str) -> None:
        super().__init__(base_url)
        self.process = process

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid


@contextmanager
def serve_in_subprocess(
    portals: tuple[PortalSpec, ...] | list[PortalSpec],
    config: ServerConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout_s: float = 30.0,
) -> Iterator[FakeHubSpotProcess]:
    """Start scripts/fake_hubspot.py; yields a handle; stops it with SIGTERM on exit."""
    setup = encode_setup(tuple(portals), config or ServerConfig())
    launcher = [str(LAUNCHER)] if LAUNCHER.exists() else ["-m", "smuves_sync.testing.fake_hubspot"]
    command = [sys.executable, *launcher, "--host", host, "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--config-json", setup], stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = _read_url(process, startup_timeout_s)
        yield FakeHubSpotProcess(process, base_url)
    finally:
        _stop(process)


def _read_url(process: subprocess.Popen[str], timeout_s: float) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    line = process.stdout.readline().strip() if ready else ""
    if not line.startswith("http"):
        raise RuntimeError(f"the fake HubSpot server did not start (exit code {process.poll()})")
    return line


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
