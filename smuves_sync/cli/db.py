"""`smuves db …`: database administration."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from smuves_sync.cli.session import load_settings
from smuves_sync.db.migrations import migrate
from smuves_sync.db.pool import database_url
from smuves_sync.errors import MigrationError


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
    """Apply pending migrations (starts the embedded Postgres when SMUVES_DATABASE_URL is unset)."""
    settings = load_settings()

    async def run() -> list[str]:
        async with database_url(settings) as url:
            applied = await migrate(url, migrations_dir or settings.migrations_dir)
        return [m.filename for m in applied]

    try:
        applied = asyncio.run(run())
    except MigrationError as exc:
        raise click.ClickException(str(exc)) from exc
    if applied:
        for filename in applied:
            click.echo(f"applied {filename}")
    else:
        click.echo("database is up to date")
