"""The `smuves` command: one click group, with each family of subcommands in its own module."""

from __future__ import annotations

import click

from smuves_sync.cli.db import db


@click.group()
@click.version_option(package_name="smuves-sync")
def cli() -> None:
    """smuves-sync: fetch HubSpot CMS content into Postgres, keep it fresh, export it."""


cli.add_command(db)


def main() -> None:
    """Console-script entry point."""
    cli()
