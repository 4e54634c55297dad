"""A fetch run left with nobody to work it, and `smuves sync` offering to work it here.

A `smuves sync` interrupted by Ctrl-C hands its jobs back for a worker; with no `smuves
worker` running, its run stays open and every later sync of those types would only say that
run is already fetching them. The next sync finds such a run (open, of the portal, with a job
that could be worked now and no live worker to claim it: `run_waiting_for_worker`) and offers
to work it here instead of starting another: `--take-over` says yes without asking,
`--no-take-over` no; without either it asks when a person is at the terminal, and otherwise
only says how.
"""

from __future__ import annotations

import sys

import click
from rich.console import Console

from smuves_sync.cli.session import login_database
from smuves_sync.db.runs import run_list
from smuves_sync.db.workers import run_waiting_for_worker
from smuves_sync.models import JobKind, Run, RunStatus
from smuves_sync.settings import Settings

# Open runs of one portal looked at: more than a handful open at once is not a left-over.
_OPEN_RUNS = 20


async def orphaned_fetch_run(settings: Settings, portal_id: int) -> Run | None:
    """The portal's newest open fetch run that waits with no worker to work it; None when
    there is none (read as the operator, who sees every run)."""
    async with login_database(settings) as operator:
        open_runs = await run_list(
            operator,
            portal_id=portal_id,
            statuses=[RunStatus.PENDING, RunStatus.RUNNING],
            kind=JobKind.FETCH,
            limit=_OPEN_RUNS,
        )
        waiting = await run_waiting_for_worker(operator, [o.run.id for o in open_runs])
    return next((o.run for o in open_runs if o.run.id in waiting), None)


def take_over_wanted(console: Console, run: Run, take_over: bool | None) -> bool:
    """Whether to work the orphaned `run` here: as `take_over` says, else as a person at the
    terminal answers; without one, no (and how to say yes is printed)."""
    types = ", ".join(str(t) for t in run.content_types)
    left = f"run {run.id} ({types}) of portal {run.portal_id} is waiting with no worker"
    if take_over is not None:
        return take_over
    if not sys.stdin.isatty():
        console.print(
            f"{left}: `smuves sync {run.portal_id} --take-over` works it here, or start "
            "`smuves worker`"
        )
        return False
    return click.confirm(f"{left}. Work it here?", default=True)
