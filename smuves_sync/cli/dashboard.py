"""`smuves dashboard [--host 127.0.0.1] [--port 8800]`: the operators' dashboard in a browser.

It prints a one-time login link (as notebook servers do), good for 15 minutes: after that,
restarting it prints a new one. It serves until Ctrl-C or SIGTERM.
Bound to localhost by default; bound to any other address it refuses to start unless
SMUVES_DASHBOARD_PASSWORD or SMUVES_DASHBOARD_TOKEN is set. It reads every tenant's rows as
the database login role, like `smuves runs` and `smuves admin`. With SMUVES_DATABASE_URL
unset the embedded Postgres is started and migrated first, like every other command.
`--port 0` picks a free port (the printed link names it).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import click
import uvicorn

from smuves_sync.cli.common import run_async
from smuves_sync.cli.session import load_settings
from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.dashboard.auth import LINK_SECONDS, require_secret_off_localhost
from smuves_sync.db import database_url, migrate, pool_for
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings

# Live pages hold their event streams open: on shutdown they get this long, then are cut.
_SHUTDOWN_GRACE_SECONDS = 3


class _Server(uvicorn.Server):
    """uvicorn, less one habit: after shutting down gracefully on SIGTERM it raises the signal
    again, which ends the process before the pool is closed and the embedded database is
    stopped. Here a signal only asks the server to stop; the caller then cleans up."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            yield
            self._captured_signals.clear()


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        raise ConfigurationError(f"cannot listen on {host}:{port}: {error}") from error
    return sock


def _url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    if host in ("0.0.0.0", "::", ""):
        host = socket.getfqdn()
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


async def serve_dashboard(settings: Settings, host: str, port: int, log_level: str) -> None:
    """Serve the dashboard until stopped; prints the login link once it listens."""
    require_secret_off_localhost(host, settings.dashboard_password, settings.dashboard_token)
    auth = DashboardAuth(password=settings.dashboard_password, token=settings.dashboard_token)
    async with database_url(settings) as url:
        if settings.database_url is None:
            await migrate(url, settings.migrations_dir, role_prefix=settings.role_prefix)
        async with pool_for(url, min_size=1, max_size=8, name="smuves_dashboard") as pool:
            app = create_dashboard_app(settings, pool=pool, auth=auth)
            sock = _listen(host, port)
            base = _url(host, sock)
            click.echo(f"smuves dashboard: {base}/")
            # Issued as it is printed: the link's minutes start now, not before the migrations.
            code = auth.issue_link()
            click.echo(
                f"open this link to sign in (it works once, for {LINK_SECONDS // 60} minutes; "
                f"restart for a new one): {base}/login?token={code}"
            )
            for configured, name in (
                (auth.has_password, "SMUVES_DASHBOARD_PASSWORD"),
                (auth.has_token, "SMUVES_DASHBOARD_TOKEN"),
            ):
                if configured:
                    click.echo(f"or sign in with {name}, typed into the sign-in form")
            config = uvicorn.Config(
                app,
                log_level=log_level,
                access_log=False,  # the login link's token must not land in a log
                # The sign-in throttle and the audit trail go by the connection's peer: a
                # forwarded-for header, which anyone on this machine could send, is not taken.
                proxy_headers=False,
                lifespan="off",
                timeout_graceful_shutdown=_SHUTDOWN_GRACE_SECONDS,
            )
            await _Server(config).serve(sockets=[sock])


@click.command("dashboard")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8800, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
def dashboard(host: str, port: int, log_level: str) -> None:
    """Serve the operators' dashboard (make dashboard); prints a one-time login link."""
    run_async(serve_dashboard(load_settings(), host, port, log_level))
