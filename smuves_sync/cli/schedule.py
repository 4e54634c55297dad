"""`smuves schedule add / list / remove`: nightly (or any cron) fetches that workers fire.

Cron expressions have five fields (minute hour day-of-month month day-of-week) and are
evaluated in UTC. A running `smuves worker` fires each due schedule exactly once, however
many workers run; without a long-running worker, system cron can run `smuves worker --burst`.
"""

from __future__ import annotations

from datetime import timedelta

import click

from smuves_sync.cli import ops_output as out
from smuves_sync.cli.common import ID
from smuves_sync.cli.ops import require_portal, with_database
from smuves_sync.cli.session import load_settings
from smuves_sync.db import Database
from smuves_sync.models import Schedule
from smuves_sync.workers.scheduler import add_schedule, list_schedules, remove_schedule


@click.group()
def schedule() -> None:
    """Fetch a portal on a cron schedule."""


@schedule.command("add")
@click.argument("portal_id", type=ID)
@click.option("--cron", "cron_expression", required=True, help='e.g. "0 3 * * *" (UTC).')
@click.option(
    "--types",
    default=None,
    help="Comma-separated content types (default: all), e.g. site_page,blog_post.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the new schedule as JSON.")
def add(portal_id: int, cron_expression: str, types: str | None, as_json: bool) -> None:
    """Add a schedule that fetches PORTAL_ID whenever the cron expression fires."""
    words = None if types is None else types.split(",")
    spread = timedelta(seconds=load_settings().schedule_spread_seconds)

    async def work(db: Database) -> Schedule:
        return await add_schedule(db, portal_id, cron_expression, words, spread=spread)

    added = with_database(work)
    if as_json:
        out.echo_json(out.schedule_json(added))
        return
    click.echo(
        f"schedule {added.id}: portal {added.portal_id} at {added.cron_expression!r} (UTC), "
        f"types {', '.join(str(t) for t in added.content_types)}; "
        f"next run {out.when(added.next_run_at)}"
    )


@schedule.command("list")
@click.option("--portal", "portal_id", type=ID, help="Only this portal's schedules.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def list_(portal_id: int | None, as_json: bool) -> None:
    """List schedules with their next and last run."""

    async def work(db: Database) -> list[Schedule]:
        await require_portal(db, portal_id)
        return await list_schedules(db, portal_id=portal_id)

    found = with_database(work)
    out.echo_records(
        found, as_json, to_json=out.schedule_json, table=out.schedules_table, none="no schedules"
    )


@schedule.command("remove")
@click.argument("schedule_id", type=ID)
def remove(schedule_id: int) -> None:
    """Remove a schedule (runs it already started are not touched)."""

    async def work(db: Database) -> Schedule:
        return await remove_schedule(db, schedule_id)

    removed = with_database(work)
    click.echo(
        f"schedule {removed.id} removed (portal {removed.portal_id}, {removed.cron_expression!r})"
    )
