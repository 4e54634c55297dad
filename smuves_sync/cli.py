"""The `smuves` command. Async work is started with `asyncio.run` here, at the edge."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="smuves-sync")
def cli() -> None:
    """smuves-sync: fetch HubSpot CMS content into Postgres, keep it fresh, export it."""


def main() -> None:
    """Console-script entry point."""
    cli()
