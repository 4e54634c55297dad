"""`smuves changeset push ID [--publish live|draft] [--no-wait] [--json]`: push a changeset.

A push run gets one job per type of the changeset's pending items (orchestrator.start_push),
worked here with a bar per type unless --no-wait (then workers push it), and a summary table
of the items' states per type. `--publish live` (the default) edits the live pages and posts
and publishes the HubDB tables written to (only a table whose draft held no other edits: else
its items are `held`); `--publish draft` writes drafts only. Exit codes: 0 every item applied
or unchanged, 1 any conflict, failure, hold (or the run failed), 2 usage, 3 already being
pushed. `--json` prints {"changeset", "run", "counts": {state: n}, "types": {type: {…}}}.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from smuves_sync.cli.common import ID, ExitCode, run_async
from smuves_sync.cli.progress import settled_ok, work_run
from smuves_sync.cli.session import load_settings, login_database, worker_database
from smuves_sync.cli.sync import configure_logging
from smuves_sync.db.push import push_item_states
from smuves_sync.push_start import start_push
from smuves_sync.settings import Settings

# The states a push leaves that need a person's look.
_NOT_DONE = ("conflict", "failed", "held", "pending")
_COLUMNS = ("applied", "unchanged", "invalid", "conflict", "failed", "held", "pending")


async def push_changeset(
    settings: Settings, changeset_id: int, publish: str, *, wait: bool, console: Console
) -> tuple[ExitCode, dict[str, Any]]:
    """Start the push and (with `wait`) work it here; the exit code and the summary."""
    async with worker_database(settings, max_size=8) as (db, conninfo):
        async with login_database(settings) as operator:
            started = await start_push(
                operator, changeset_id, publish=publish, max_attempts=settings.max_attempts
            )
        run = started.run
        types = ", ".join(str(j.content_type) for j in started.jobs)
        console.print(f"run {run.id}: pushing changeset {changeset_id} ({types}), {publish}")
        ok = True
        if wait:
            snapshot = await work_run(
                db, conninfo, settings, run, concurrency=len(started.jobs), console=console
            )
            ok = settled_ok(snapshot)
        async with login_database(settings) as operator:
            states = await push_item_states(operator, changeset_id)
    counts: dict[str, int] = {}
    for by_state in states.values():
        for state, n in by_state.items():
            counts[state] = counts.get(state, 0) + n
    summary = {"changeset": changeset_id, "run": run.id, "counts": counts, "types": states}
    if not wait:
        return ExitCode.OK, summary
    done = ok and not any(counts.get(state) for state in _NOT_DONE)
    return (ExitCode.OK if done else ExitCode.FAILED), summary


def states_table(states: dict[str, dict[str, int]]) -> Table:
    """The items' states, a row per type."""
    table = Table(title="changeset items")
    table.add_column("type")
    for column in _COLUMNS:
        table.add_column(column, justify="right")
    for content_type, by_state in states.items():
        table.add_row(content_type, *(f"{by_state.get(c, 0):,}" for c in _COLUMNS))
    return table


@click.command("push")
@click.argument("changeset_id", type=ID)
@click.option(
    "--publish",
    type=click.Choice(["live", "draft"]),
    default="live",
    show_default=True,
    help="live: edit live pages and posts, publish HubDB tables; draft: drafts only.",
)
@click.option("--no-wait", is_flag=True, help="Only enqueue the push; workers will push it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def push(ctx: click.Context, changeset_id: int, publish: str, no_wait: bool, as_json: bool) -> None:
    """Push changeset CHANGESET_ID's pending items to HubSpot."""
    settings = load_settings()
    console = Console(stderr=as_json)
    configure_logging(console)
    code, summary = run_async(
        push_changeset(settings, changeset_id, publish, wait=not no_wait, console=console)
    )
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
    else:
        console.print(states_table(summary["types"]))
    ctx.exit(int(code))
