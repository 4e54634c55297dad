"""Run the fake on 127.0.0.1: in a background thread of this process, or as a subprocess.

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
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot, PortalStats
from smuves_sync.testing.fake_hubspot.portal import TruthItem
from smuves_sync.testing.fake_hubspot.spec import (
    Churn,
    FaultRule,
    PortalSpec,
    ServerConfig,
    encode_faults,
    encode_setup,
)

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


class FakeHubSpotProcess:
    """A fake running in a subprocess, driven through its /_fake admin endpoints.

    Methods mirror FakeHubSpot's control API. They block briefly on a loopback call; use them
    from fixtures or between the awaited steps of a test.
    """

    def __init__(self, process: subprocess.Popen[str], base_url: str) -> None:
        self.process = process
        self.base_url = base_url

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        with httpx.Client(base_url=self.base_url, timeout=60.0) as client:
            response = client.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    def advance(self, portal_id: int, churn: Churn | None = None) -> int:
        """Move a portal to its next version; returns it."""
        body = {} if churn is None else _fields(churn)
        return int(self._call("POST", f"/_fake/portals/{portal_id}/advance", body)["version"])

    def version(self, portal_id: int) -> int:
        """The portal's current content version."""
        return int(self._call("GET", f"/_fake/portals/{portal_id}")["version"])

    def revoke_token(self, token: str) -> None:
        """Make a token answer 401 from now on."""
        self._call("POST", "/_fake/tokens/revoke", {"token": token})

    def add_token(self, portal_id: int, token: str) -> None:
        """Accept another token for a portal."""
        self._call("POST", "/_fake/tokens", {"portal_id": portal_id, "token": token})

    def set_faults(self, faults: tuple[FaultRule, ...]) -> None:
        """Replace the fault rules (their counts restart from 1)."""
        self._call("PUT", "/_fake/faults", {"faults": encode_faults(faults)})

    def ground_truth(
        self,
        portal_id: int,
        content_type: ContentType | str,
        *,
        archived: bool | None = None,
        with_data: bool = False,
    ) -> list[TruthItem]:
        """Exactly what the listings of this type serve now."""
        params = f"type={ContentType(content_type).value}&data={str(with_data).lower()}"
        if archived is not None:
            params += f"&archived={str(archived).lower()}"
        raw = self._call("GET", f"/_fake/portals/{portal_id}/truth?{params}")
        return [
            TruthItem(
                hubspot_id=item["id"],
                updated_at=_parse_time(item["updated"]),
                archived=item["archived"],
                data=item.get("data"),
            )
            for item in raw["items"]
        ]

    def stats(self, portal_id: int) -> PortalStats:
        """A snapshot of one portal's counters."""
        return self.all_stats()[portal_id]

    def all_stats(self) -> dict[int, PortalStats]:
        """Snapshots of every portal's counters."""
        raw = self._call("GET", "/_fake/stats")["portals"]
        return {int(pid): PortalStats.from_json(stats) for pid, stats in raw.items()}

    def reset_stats(self) -> None:
        """Zero the counters."""
        self._call("POST", "/_fake/stats/reset")


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


def _fields(churn: Churn) -> dict[str, float]:
    return {
        "changed": churn.changed,
        "deleted": churn.deleted,
        "added": churn.added,
        "archived": churn.archived,
    }


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)
