"""`smuves serve [--host H] [--port P]`: the HTTP API for the frontend, under uvicorn.

Needs SMUVES_JWT_SECRET (to verify bearer tokens) and SMUVES_SECRET_KEY (to store portal
tokens). With SMUVES_DATABASE_URL unset the embedded Postgres is started and migrated first,
like `smuves sync` does; a configured database is migrated by its operator.
`--print-openapi` prints the OpenAPI document (no secrets or database needed) and exits.
"""

from __future__ import annotations

import json

import click
import uvicorn

from smuves_sync.api import create_app, openapi_document
from smuves_sync.cli.common import run_async
from smuves_sync.cli.session import load_settings
from smuves_sync.db import database_url, migrate
from smuves_sync.settings import Settings

# Open event streams never end by themselves: on SIGTERM they get this long, then are cut.
_SHUTDOWN_GRACE_SECONDS = 10


async def _serve(settings: Settings, host: str, port: int, log_level: str) -> None:
    create_app(settings)  # missing secrets fail here, before any database is started
    async with database_url(settings) as url:
        if settings.database_url is None:
            await migrate(url, settings.migrations_dir)
        app = create_app(settings.model_copy(update={"database_url": url}))
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            timeout_graceful_shutdown=_SHUTDOWN_GRACE_SECONDS,
        )
        await uvicorn.Server(config).serve()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@click.option("--print-openapi", is_flag=True, help="Print the OpenAPI document and exit.")
def serve(host: str, port: int, log_level: str, print_openapi: bool) -> None:
    """Serve the HTTP API (FastAPI under uvicorn)."""
    if print_openapi:
        click.echo(json.dumps(openapi_document(), indent=2))
        return
    run_async(_serve(load_settings(), host, port, log_level))
