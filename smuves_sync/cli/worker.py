"""`smuves worker --kinds fetch,export,push --concurrency N [--burst]`: a long-running worker.

It reconciles runs at start and every SMUVES_RECONCILE_INTERVAL_SECONDS, fires due schedules,
claims jobs up to its free slots, wakes on NOTIFY (polling as a fallback), keeps leases alive
with heartbeats, and on SIGTERM or Ctrl-C stops claiming and finishes its jobs within
SMUVES_SHUTDOWN_GRACE_SECONDS, handing the rest back with their cursors. It rides out
database restarts. --burst: exit once nothing is left to claim (for cron).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import timedelta

import click

from smuves_sync.cli.common import ExitCode, command_error, concurrency_option, run_async
from smuves_sync.cli.session import load_settings, worker_database
from smuves_sync.db import Database
from smuves_sync.models import JobKind
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.duties import Periodic
from smuves_sync.workers.runner import Runner, RunnerStats
from smuves_sync.workers.scheduler import fire_due_schedules

log = logging.getLogger("smuves_sync.worker")


def _kinds(text: str) -> tuple[JobKind, ...]:
    words = [w.strip() for w in text.split(",") if w.strip()]
    known = [k.value for k in JobKind]
    unknown = [w for w in words if w not in known]
    if unknown or not words:
        raise command_error(
            f"--kinds: expected a comma-separated list of {', '.join(known)}, got {text!r}",
            ExitCode.USAGE,
        )
    return tuple(JobKind(w) for w in dict.fromkeys(words))


def schedule_firing(settings: Settings) -> Periodic:
    """The runner's periodic task that fires the due schedules, as every `smuves worker` runs it."""

    async def fire(db: Database) -> None:
        await fire_due_schedules(
            db,
            max_attempts=settings.max_attempts,
            spread=timedelta(seconds=settings.schedule_spread_seconds),
        )

    fire.__name__ = "firing due schedules"
    return (settings.poll_interval_seconds, fire)


async def run_worker(
    settings: Settings, kinds: tuple[JobKind, ...], concurrency: int, burst: bool
) -> RunnerStats:
    """Work jobs of `kinds` until SIGTERM / SIGINT (or, with `burst`, until none is left)."""
    if JobKind.FETCH in kinds or JobKind.PUSH in kinds:
        # Fetch and push jobs decrypt portal tokens: a missing or invalid key is refused first.
        TokenCipher(settings.secret_key)
    async with worker_database(settings, max_size=2 * concurrency + 4) as (db, conninfo):
        runner = Runner(
            db,
            settings,
            kinds=kinds,
            concurrency=concurrency,
            burst=burst,
            periodic=[schedule_firing(settings)],
            wakeups_conninfo=conninfo,
        )
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, runner.request_stop)
        log.info(
            "worker %s: kinds %s, concurrency %d%s",
            runner.worker_id,
            ",".join(kinds),
            concurrency,
            " (burst)" if burst else "",
        )
        stats = await runner.run()
    log.info(
        "worker %s stopped: %d claimed, %d completed, %d failed, %d parked, %d handed back, "
        "%d leases lost",
        runner.worker_id,
        stats.claimed,
        stats.completed,
        stats.failed,
        stats.parked,
        stats.released,
        stats.lost,
    )
    return stats


@click.command("worker")
@click.option("--kinds", default="fetch,export,push", show_default=True, help="Job kinds to work.")
@concurrency_option(maximum=256, default=4, help="Jobs worked at once.")
@click.option("--burst", is_flag=True, help="Exit when nothing is left to claim.")
@click.option("--log-level", default="INFO", show_default=True, help="Python logging level.")
def worker(kinds: str, concurrency: int, burst: bool, log_level: str) -> None:
    """Work fetch and export jobs from the queue."""
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # One line per HubSpot request is noise at INFO; the client logs what matters itself.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    settings = load_settings()
    run_async(run_worker(settings, _kinds(kinds), concurrency, burst))
