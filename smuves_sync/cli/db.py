"""`smuves db …`: database administration."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from smuves_sync.cli.common import ExitCode, command_error
from smuves_sync.cli.session import load_settings
from smuves_sync.db.migrations import migrate, set_login_passwords
from smuves_sync.db.pool import database_url
from smuves_sync.errors import ConfigurationError, MigrationError


@click.group()
def db() -> None:
    """Database administration."""


@db.command("migrate")
@click.option(
    "--migrations-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory of NNNN_name.sql files (default: the project's migrations/).",
)
def db_migrate(migrations_dir: Path | None) -> None:
    """Apply pending migrations (starts the embedded Postgres when SMUVES_DATABASE_URL is unset).

    The runtime logins smuves_api_login and smuves_worker_login (<prefix>_… with
    SMUVES_ROLE_PREFIX) are created where missing and may connect to this database only; when
    SMUVES_API_DATABASE_URL / SMUVES_WORKER_DATABASE_URL carry a password for them, it is set.
    """
    settings = load_settings()

    async def run() -> tuple[list[str], list[str]]:
        async with database_url(settings) as url:
            applied = await migrate(
                url, migrations_dir or settings.migrations_dir, role_prefix=settings.role_prefix
            )
            logins = await set_login_passwords(url, settings)
        return [m.filename for m in applied], logins

    try:
        applied, logins = asyncio.run(run())
    except ConfigurationError as exc:
        raise command_error(str(exc), ExitCode.USAGE) from exc
    except MigrationError as exc:
        raise click.ClickException(str(exc)) from exc
    if applied:
        for filename in applied:
            click.echo(f"applied {filename}")
    else:
        click.echo("database is up to date")
    for login in logins:
        click.echo(f"password of {login} set from its runtime URL")
