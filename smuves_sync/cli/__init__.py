"""The `smuves` command: one click group, with each family of subcommands in its own module."""

from __future__ import annotations

import click

from smuves_sync.cli.admin import admin
from smuves_sync.cli.changeset import changeset
from smuves_sync.cli.common import refuse_undecodable
from smuves_sync.cli.dashboard import dashboard
from smuves_sync.cli.db import db
from smuves_sync.cli.dev import dev
from smuves_sync.cli.export import export
from smuves_sync.cli.history import changes, diff, history
from smuves_sync.cli.ops import COMMANDS as OPS_COMMANDS
from smuves_sync.cli.portal import portal
from smuves_sync.cli.push import push as changeset_push
from smuves_sync.cli.schedule import schedule
from smuves_sync.cli.secret_key import secret_key
from smuves_sync.cli.serve import serve
from smuves_sync.cli.sync import sync
from smuves_sync.cli.worker import worker


class _Smuves(click.Group):
    """The top group: sees every argument of every subcommand before anything parses them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_undecodable(args)
        return super().parse_args(ctx, args)


@click.group(cls=_Smuves)
@click.version_option(package_name="smuves-sync")
def cli() -> None:
    """smuves-sync: fetch HubSpot CMS content into Postgres, keep it fresh, export it."""


changeset.add_command(changeset_push)
cli.add_command(db)
cli.add_command(portal)
cli.add_command(sync)
cli.add_command(worker)
cli.add_command(export)
cli.add_command(serve)
cli.add_command(dashboard)
cli.add_command(secret_key)
cli.add_command(dev)
for _command in (*OPS_COMMANDS, admin, schedule, history, diff, changes, changeset):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    cli()
