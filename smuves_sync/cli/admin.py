"""`smuves admin …`: repair and housekeeping (reconcile, requeue, retry-failed, prune,
rotate-key).

Like the other on-call commands (`ops`) they run as the database login role and see every
tenant; a bad id or filter is refused with a message on stderr and exit code 2. The SQL
behind them is in smuves_sync/db/queries/ (runs.sql, jobs.sql, and versions.sql for the
content history `admin prune` deletes).
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

import click

from smuves_sync.cli import ops_output as out
from smuves_sync.cli.common import ID, ExitCode, command_error, run_async
from smuves_sync.cli.ops import json_option, require_portal, require_run, with_database
from smuves_sync.cli.secret_key import Rotation, Verification, rotate_tokens, verify_tokens
from smuves_sync.cli.session import load_settings, login_database, token_cipher
from smuves_sync.db import Database
from smuves_sync.db.job_requeues import (
    RequeueOutcome,
    RequeueResult,
    job_requeue,
    jobs_retry_failed,
)
from smuves_sync.db.runs import PruneCounts, run_reconcile, runs_prune
from smuves_sync.db.versions import VersionsPruneCounts, versions_prune
from smuves_sync.errors import InvalidInput
from smuves_sync.export_files import remove_export_files
from smuves_sync.models import Run

_AGE = re.compile(r"^\s*(?P<n>\d+)\s*(?P<unit>[smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """'30d', '12h', '90m', '2w', '45s' as a positive timedelta."""
    match = _AGE.match(text)
    if match is None or int(match["n"]) == 0:
        raise InvalidInput(
            f"invalid age {text!r}: expected a positive number and a unit s, m, h, d or w "
            "(e.g. 30d)"
        )
    return timedelta(**{_UNITS[match["unit"]]: int(match["n"])})


@click.group()
def admin() -> None:
    """Repair and housekeeping: reconcile, requeue, retry-failed, prune, rotate-key."""


@admin.command("reconcile")
@json_option
def reconcile(as_json: bool) -> None:
    """Settle runs whose jobs have all finished (what every worker also does on start)."""

    async def work(db: Database) -> list[Run]:
        return await run_reconcile(db)

    settled = with_database(work)
    if as_json:
        out.echo_json([out.run_json(r) for r in settled])
        return
    click.echo(f"settled {len(settled)} run(s)")
    for r in settled:
        click.echo(f"  run {r.id} (portal {r.portal_id}): {r.status}")


def _refusal(result: RequeueResult) -> str:
    if result.outcome is RequeueOutcome.NOT_FOUND:
        return f"job {result.job_id} not found (see `smuves jobs`)"
    if result.outcome is RequeueOutcome.NOT_FINISHED:
        return (
            f"job {result.job_id} is {result.previous_status}: only failed or stopped jobs "
            "can be requeued"
        )
    return (
        f"job {result.job_id} not requeued: job {result.blocking_job_id} of run "
        f"{result.blocking_run_id} already fetches the same portal and type; wait for it or "
        "stop it first"
    )


@admin.command("requeue")
@click.argument("job_id", type=ID)
@click.option(
    "--from-start",
    is_flag=True,
    help="Forget the job's cursor and progress (default: resume from its checkpoint).",
)
def requeue(job_id: int, from_start: bool) -> None:
    """Put a failed or stopped job back to pending, attempts reset, its run reopened."""

    async def work(db: Database) -> RequeueResult:
        return await job_requeue(db, job_id, from_start=from_start)

    result = with_database(work)
    if result.outcome is not RequeueOutcome.REQUEUED:
        raise command_error(_refusal(result), ExitCode.USAGE)
    click.echo(f"job {job_id} requeued (was {result.previous_status})")


@admin.command("retry-failed")
@click.option("--portal", "portal_id", type=ID, help="Only this portal's failed jobs.")
@click.option("--run", "run_id", type=ID, help="Only this run's failed jobs.")
@json_option
def retry_failed(portal_id: int | None, run_id: int | None, as_json: bool) -> None:
    """Requeue failed jobs (newest first; a type already in flight is skipped and named)."""

    async def work(db: Database) -> list[RequeueResult]:
        await require_portal(db, portal_id)
        await require_run(db, run_id)
        return await jobs_retry_failed(db, portal_id=portal_id, run_id=run_id)

    results = with_database(work)
    requeued = [r for r in results if r.outcome is RequeueOutcome.REQUEUED]
    if as_json:
        out.echo_json([out.record_json(r, leave_out={"previous_status"}) for r in results])
        return
    click.echo(f"requeued {len(requeued)} of {len(results)} failed job(s)")
    for r in results:
        if r.outcome is RequeueOutcome.REQUEUED:
            click.echo(f"  job {r.job_id}: requeued")
        else:
            click.echo(f"  {_refusal(r)}")


@admin.command("prune")
@click.option(
    "--older-than",
    "older_than",
    default=None,
    help="Age such as 30d, 12h, 2w (s m h d w): prune settled runs and notifications older "
    "than it. Without it: content history older than SMUVES_HISTORY_DAYS.",
)
@click.option("--dry-run", is_flag=True, help="Only count what would be deleted.")
@json_option
def prune(older_than: str | None, dry_run: bool, as_json: bool) -> None:
    """Delete settled runs (with their jobs, exports and the exports' files under
    SMUVES_EXPORT_DIR, notifications) and notifications older than --older-than; open runs
    are never touched. Without --older-than: delete the content versions superseded more
    than SMUVES_HISTORY_DAYS days ago (default 90; 0 keeps them all), and the objects deleted
    in HubSpot more than that ago with all their versions, in batches of short transactions;
    an existing object's current version is never deleted."""
    if older_than is None:
        _prune_versions(dry_run, as_json)
        return
    try:
        age = parse_age(older_than)
    except InvalidInput as error:
        raise command_error(str(error), ExitCode.USAGE) from error
    export_dir = load_settings().export_dir

    async def work(db: Database) -> tuple[PruneCounts, int]:
        # `db` is unscoped: the prune has committed when it returns, so no file of an export
        # that is kept is removed.
        counts = await runs_prune(db, age, dry_run=dry_run)
        if dry_run:
            return counts, 0
        return counts, await asyncio.to_thread(remove_export_files, export_dir, counts.export_files)

    counts, files = with_database(work)
    if as_json:
        age_seconds = age.total_seconds()
        record = out.record_json(counts, leave_out={"export_files"})
        out.echo_json({"dry_run": dry_run, "older_than_seconds": age_seconds, **record})
        return
    verb = "would delete" if dry_run else "deleted"
    click.echo(
        f"{verb} {counts.runs} run(s), {counts.jobs} job(s), {counts.exports} export(s), "
        f"{counts.notifications} notification(s) older than {older_than.strip()}"
    )
    if files:
        click.echo(f"removed {files} export file(s) from {export_dir}")


def _prune_versions(dry_run: bool, as_json: bool) -> None:
    """`smuves admin prune` without --older-than: content history past its retention."""
    days = load_settings().history_days
    if days == 0:
        if as_json:
            out.echo_json({"dry_run": dry_run, "history_days": 0, "versions": 0})
        else:
            click.echo("SMUVES_HISTORY_DAYS is 0: every content version is kept, none pruned")
        return

    async def work(db: Database) -> VersionsPruneCounts:
        return await versions_prune(db, timedelta(days=days), dry_run=dry_run)

    counts = with_database(work)
    if as_json:
        out.echo_json(
            {
                "dry_run": dry_run,
                "history_days": days,
                "cutoff": counts.cutoff,
                "versions": counts.deleted,
                "documents_moved": counts.documents_moved,
                "deleted_objects": counts.objects,
                "deleted_objects_versions": counts.object_versions,
            }
        )
        return
    verb = "would delete" if dry_run else "deleted"
    click.echo(
        f"{verb} {counts.deleted} content version(s) superseded more than {days} day(s) ago "
        f"(before {out.when(counts.cutoff)}); current versions are kept"
    )
    click.echo(
        f"{verb} {counts.objects} object(s) deleted in HubSpot before then, with their "
        f"{counts.object_versions} version(s)"
    )


@admin.command("rotate-key")
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=500,
    show_default=True,
    help="Portals re-encrypted per transaction.",
)
def rotate_key(batch_size: int) -> None:
    """Re-encrypt every stored portal token under the newest key of SMUVES_SECRET_KEY, then
    check every stored token.

    Run it once every process (API, workers) runs with NEW,OLD. Batches by portal id, each its
    own transaction; tokens already under the newest key are left alone, so a rotation that
    stopped is finished by running it again. Then a verification pass reads every token
    again: exit code 1, naming the portals, while one is under an older key (a process with
    only the old key stored it) or under no key of the list. Only after exit code 0 may the
    old key leave SMUVES_SECRET_KEY."""
    settings = load_settings()
    cipher = token_cipher(settings)

    def batch_done(done: Rotation) -> None:
        click.echo(f"up to portal {done.last_id}: {done.rotated} re-encrypted so far")

    async def main() -> tuple[Rotation, Verification]:
        async with login_database(settings) as db:
            done = await rotate_tokens(db, cipher, batch_size=batch_size, on_batch=batch_done)
            return done, await verify_tokens(db, cipher, batch_size=batch_size)

    done, checked = run_async(main())
    click.echo(
        f"{done.rotated} token(s) re-encrypted under the newest key, {done.current} already were"
    )
    if checked.done:
        click.echo(
            f"verified: all {checked.current} stored token(s) are under the newest key; the "
            "older keys may now leave SMUVES_SECRET_KEY"
        )
        return
    raise command_error(verification_problem(checked), ExitCode.FAILED)


def _ids(portals: list[int]) -> str:
    return ", ".join(str(p) for p in portals)


def verification_problem(checked: Verification) -> str:
    """The one line `rotate-key` ends with while a token is not under the newest key."""
    problems = []
    if checked.older:
        problems.append(
            f"{len(checked.older)} portal(s) still under an older key (portals "
            f"{_ids(checked.older)}): a process with only the old key stored them; run every "
            "process with SMUVES_SECRET_KEY=NEW,OLD, then `smuves admin rotate-key` again"
        )
    if checked.unreadable:
        problems.append(
            f"{len(checked.unreadable)} token(s) decrypt with no key of SMUVES_SECRET_KEY "
            f"(portals {_ids(checked.unreadable)}): add the key they were stored with after "
            "the newest, or reconnect those portals"
        )
    return "verification failed: " + "; ".join(problems) + "; keep the old key until it exits 0"
