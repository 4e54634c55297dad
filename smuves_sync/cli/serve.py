"""`smuves serve [--host H] [--port P] [--metrics-port M]`: the HTTP API, under uvicorn.

Needs SMUVES_JWT_SECRET (to verify bearer tokens), SMUVES_JWT_AUDIENCE (the `aud` those tokens
are issued for; SMUVES_JWT_ALLOW_ANY_AUDIENCE=1 to accept any on purpose) and a valid
SMUVES_SECRET_KEY (to store portal tokens); without one of them it exits 2 before anything
starts. With SMUVES_DATABASE_URL unset the embedded Postgres is started and migrated first,
like `smuves sync` does; a configured database is migrated by its operator, and the API then
logs in as smuves_api_login at SMUVES_API_DATABASE_URL (exit 2 when it is not set, unless
SMUVES_SHARED_DATABASE_LOGIN=1).

/metrics is never served to tenants: with --metrics-port it is served on a listener of its
own (--metrics-host, default 127.0.0.1) that serves nothing else; with SMUVES_METRICS_TOKEN it
answers `Authorization: Bearer <that token>`, on either port.
`--print-openapi` prints the OpenAPI document (no secrets or database needed) and exits.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket

import click
import uvicorn
from fastapi import FastAPI

from smuves_sync.api import create_app, openapi_document
from smuves_sync.cli.common import ExitCode, command_error, run_async
from smuves_sync.cli.session import load_settings
from smuves_sync.db import DbRole, database_url, migrate, with_login_urls
from smuves_sync.db.pool import runtime_conninfo
from smuves_sync.errors import ConfigurationError
from smuves_sync.settings import Settings

# Open event streams end at their token's expiry; on SIGTERM they get this long, then are cut.
_SHUTDOWN_GRACE_SECONDS = 10
_BACKLOG = 2048  # uvicorn's default


def _config(app: FastAPI, host: str, port: int, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=_SHUTDOWN_GRACE_SECONDS,
    )


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, for uvicorn to serve; an address in use exits 2."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    # Listening now: a client that connects before uvicorn accepts waits in the backlog.
    sock.listen(_BACKLOG)
    return sock


def _url(sock: socket.socket, host: str) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{sock.getsockname()[1]}"


async def _serve(
    settings: Settings,
    host: str,
    port: int,
    log_level: str,
    metrics: tuple[str, int] | None = None,
) -> None:
    create_app(settings)  # missing secrets fail here, before any database is started
    own_login = DbRole.APP.configured_url(settings) is not None
    if settings.database_url is not None or own_login:
        runtime_conninfo(settings, DbRole.APP)  # and a missing runtime login
    async with contextlib.AsyncExitStack() as stack:
        if own_login:  # all the API needs; never an embedded server in its place
            ready = settings
        else:
            url = await stack.enter_async_context(database_url(settings))
            if settings.database_url is None:
                await migrate(url, settings.migrations_dir, role_prefix=settings.role_prefix)
            ready = with_login_urls(settings, url)
        if metrics is None:
            await uvicorn.Server(_config(create_app(ready), host, port, log_level)).serve()
            return
        # One server, one app, two listening sockets: the app tells them apart by local port.
        api_socket = _listen(host, port)
        try:
            metrics_socket = _listen(*metrics)
        except ConfigurationError:
            api_socket.close()
            raise
        with api_socket, metrics_socket:
            app = create_app(ready, metrics_port=metrics_socket.getsockname()[1])
            config = _config(app, host, port, log_level)  # sets up uvicorn's logging
            # uvicorn says nothing of sockets it is handed; say it as it would.
            log = logging.getLogger("uvicorn.error")
            log.info("Uvicorn running on %s (Press CTRL+C to quit)", _url(api_socket, host))
            log.info("/metrics on %s/metrics", _url(metrics_socket, metrics[0]))
            await uvicorn.Server(config).serve(sockets=[api_socket, metrics_socket])


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Also listen here, for /metrics only (0 picks a free port).",
)
@click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    help="Address of the --metrics-port listener.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@click.option("--print-openapi", is_flag=True, help="Print the OpenAPI document and exit.")
def serve(
    host: str,
    port: int,
    metrics_port: int | None,
    metrics_host: str,
    log_level: str,
    print_openapi: bool,
) -> None:
    """Serve the HTTP API (FastAPI under uvicorn)."""
    if print_openapi:
        click.echo(json.dumps(openapi_document(), indent=2))
        return
    if metrics_port is not None and metrics_port != 0 and metrics_port == port:
        raise command_error("--metrics-port must differ from --port", ExitCode.USAGE)
    metrics = None if metrics_port is None else (metrics_host, metrics_port)
    run_async(_serve(load_settings(), host, port, log_level, metrics))
