"""The dashboard's buttons (POST): Retry, Requeue from start, Retry all, Stop, Sync.

Every button first answers with a confirmation page that says what will happen (nothing
changes yet). The page carries a single-use nonce bound to the session, the action and its
target (`dashboard.confirmation`); only its Confirm button acts, and the action spends the
nonce in the transaction that acts. A POST without a valid nonce (none, spent, expired, for
another target or session: a replay, a forged form, a second click) acts not: it shows the
confirmation page again, and a nonce that was given but not valid is written to the audit
trail as a refusal.
Both steps need the session and its CSRF token (`web.operator_action`). An action goes
through the same functions as the command line — `smuves admin requeue` (`job_requeue`),
`smuves admin retry-failed` (`jobs_retry_failed`), `smuves sync --no-wait` (`start_fetch`) —
and writes its audit row (who, what, to what, with what outcome) in the same transaction, so
an action is never without its record. Then the browser is sent back with a message saying
what happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.dashboard.auth import Session
from smuves_sync.dashboard.confirmation import back_to, confirmation_page, when_confirmed
from smuves_sync.dashboard.web import (
    COUNT_CAP,
    Form,
    audit,
    context_of,
    existing,
    int_or_none,
    operator_action,
    path_id,
    see_other,
)
from smuves_sync.db import Database
from smuves_sync.db.job_requeues import (
    RequeueOutcome,
    RequeueResult,
    job_requeue,
    jobs_retry_failed,
)
from smuves_sync.db.jobs import job_dead_count, job_get_many
from smuves_sync.db.portals import portal_get
from smuves_sync.db.runs import run_get, run_operator_stop
from smuves_sync.errors import AllDuplicateJobs, InvalidInput, PortalNeedsReconnect
from smuves_sync.models import JobPriority
from smuves_sync.orchestrator import FetchStarted, start_fetch

# More jobs than this in one press is a mistake, not a selection.
MAX_SELECTED = 200


def _describe(result: RequeueResult) -> tuple[str, str]:
    """(level, message) for one requeue's outcome."""
    job = result.job_id
    if result.outcome is RequeueOutcome.REQUEUED:
        return "ok", f"job {job} requeued (was {result.previous_status}): now pending"
    if result.outcome is RequeueOutcome.NOT_FOUND:
        return "error", f"job {job} not found"
    if result.outcome is RequeueOutcome.NOT_FINISHED:
        return (
            "error",
            f"job {job} is {result.previous_status}: only failed or stopped jobs can be requeued",
        )
    return (
        "error",
        f"job {job} not requeued: job {result.blocking_job_id} of run {result.blocking_run_id} "
        "already fetches the same portal and type; wait for it or stop it first",
    )


def _outcomes(results: Sequence[RequeueResult]) -> dict[str, Any]:
    return {
        "results": [
            {
                "job_id": r.job_id,
                "outcome": str(r.outcome),
                "previous_status": str(r.previous_status) if r.previous_status else None,
                "blocking_job_id": r.blocking_job_id,
            }
            for r in results
        ]
    }


def _selected(form: Form) -> list[int]:
    only = form.one("only")
    words = [only] if only else form.all("job_id")
    ids = {int_or_none(word, "job id") for word in words}
    found = sorted((i for i in ids if i is not None), reverse=True)
    if len(found) > MAX_SELECTED:
        raise InvalidInput(f"at most {MAX_SELECTED} jobs at once, {len(found)} were selected")
    return found


async def _requeue(request: Request, session: Session, form: Form, *, from_start: bool) -> Response:
    ctx = context_of(request)
    back = back_to(form, "/dead-letter")
    job_ids = _selected(form)
    if not job_ids:
        session.flash("error", "no job selected: tick the jobs to retry first")
        return see_other(back)
    verb = "Requeue from start" if from_start else "Retry"
    action = "job_requeue_from_start" if from_start else "job_retry"
    target: dict[str, Any] = {"job_ids": job_ids}

    async def act(tx: Database) -> list[RequeueResult]:
        results = [await job_requeue(tx, job_id, from_start=from_start) for job_id in job_ids]
        await audit(tx, request, session, action, target, _outcomes(results))
        return results

    results = await when_confirmed(request, session, form, action, target, act)
    if results is None:
        jobs = await job_get_many(ctx.db, job_ids)
        return await confirmation_page(
            request,
            session,
            action,
            target,
            heading=f"{verb} {len(job_ids)} job(s)",
            description=(
                "These jobs go back to pending with their attempts reset, and their runs "
                "reopen; a worker picks them up "
                + (
                    "from their first page: their saved progress is forgotten."
                    if from_start
                    else "where they stopped (their last saved page)."
                )
            ),
            items=[
                f"job {j.job.id}: {j.job.kind} {j.job.content_type} of {j.portal_name or 'portal'} "
                f"({j.job.portal_id}), run {j.job.run_id}, {j.job.status} after "
                f"{j.job.attempts} of {j.job.max_attempts} attempts"
                for j in jobs
            ],
            warning=None
            if len(jobs) == len(job_ids)
            else "some of the selected jobs no longer exist",
            fields=[("job_id", str(i)) for i in job_ids] + [("back", back)],
            button=f"{verb} {len(job_ids)} job(s)",
            back=back,
            form=form,
        )
    for result in results:
        session.flash(*_describe(result))
    return see_other(back)


@operator_action
async def retry(request: Request, session: Session, form: Form) -> Response:
    """Retry one job (`only`) or the ticked ones (`job_id`): `smuves admin requeue`."""
    return await _requeue(request, session, form, from_start=False)


@operator_action
async def requeue_from_start(request: Request, session: Session, form: Form) -> Response:
    """Requeue one job or the ticked ones from their first page: `admin requeue --from-start`."""
    return await _requeue(request, session, form, from_start=True)


@operator_action
async def retry_all(request: Request, session: Session, form: Form) -> Response:
    """Every failed job of a portal and/or run (none: all): `smuves admin retry-failed`."""
    ctx = context_of(request)
    portal_id = int_or_none(form.one("portal"), "portal")
    run_id = int_or_none(form.one("run"), "run")
    scope = (
        " ".join(
            part
            for part in (
                f"of portal {portal_id}" if portal_id else "",
                f"of run {run_id}" if run_id else "",
            )
            if part
        )
        or "of every portal"
    )
    back = "/dead-letter"
    action = "jobs_retry_failed"
    target: dict[str, Any] = {"portal_id": portal_id, "run_id": run_id}

    async def act(tx: Database) -> list[RequeueResult]:
        results = await jobs_retry_failed(tx, portal_id=portal_id, run_id=run_id)
        await audit(tx, request, session, action, target, _outcomes(results))
        return results

    results = await when_confirmed(request, session, form, action, target, act)
    if results is None:
        count, capped = await job_dead_count(
            ctx.db, cap=COUNT_CAP, portal_id=portal_id, run_id=run_id
        )
        return await confirmation_page(
            request,
            session,
            action,
            target,
            heading=f"Retry all failed jobs {scope}",
            description=(
                f"{'More than ' if capped else ''}{count:,} failed job(s) {scope} go back to "
                "pending, newest first, resuming where they stopped. An older job of a type "
                "that is already back in flight is skipped and named."
            ),
            fields=[("portal", str(portal_id or "")), ("run", str(run_id or ""))],
            button="Retry them all",
            back=back,
            form=form,
        )
    requeued = sum(r.outcome is RequeueOutcome.REQUEUED for r in results)
    session.flash("ok", f"requeued {requeued} of {len(results)} failed job(s) {scope}")
    for result in results:
        if result.outcome is not RequeueOutcome.REQUEUED:
            session.flash(*_describe(result))
    return see_other(back)


@operator_action
async def stop(request: Request, session: Session, form: Form) -> Response:
    """Stop a run: its pending and running jobs end stopped (a worker loses its lease)."""
    ctx = context_of(request)
    run_id = path_id(request, "run_id")
    back = f"/runs/{run_id}"
    run = existing(await run_get(ctx.db, run_id), "No such run", f"Run {run_id} does not exist.")
    if run.status.is_terminal:
        session.flash("error", f"run {run_id} has already finished ({run.status})")
        return see_other(back)
    action = "run_stop"
    target: dict[str, Any] = {"run_id": run_id}

    async def act(tx: Database) -> dict[str, Any]:
        after = await run_operator_stop(tx, run_id)
        outcome = {"status": str(after.status) if after else None}
        await audit(tx, request, session, action, target, outcome)
        return outcome

    outcome = await when_confirmed(request, session, form, action, target, act)
    if outcome is None:
        return await confirmation_page(
            request,
            session,
            action,
            target,
            heading=f"Stop run {run_id}",
            description=(
                f"The {run.kind} run {run_id} of portal {run.portal_id} stops: its pending and "
                "running jobs end as stopped, and a worker running one of them stops at its "
                "next heartbeat. Stopped jobs can be retried from the dead letter."
            ),
            button=f"Stop run {run_id}",
            back=back,
            form=form,
        )
    session.flash("ok", f"run {run_id} stopped (now {outcome['status']})")
    return see_other(back)


def _sync_refusal(error: AllDuplicateJobs | PortalNeedsReconnect) -> dict[str, Any]:
    """What the audit trail says of a sync the orchestrator refused."""
    if isinstance(error, AllDuplicateJobs):
        return {"refused": "ALL_DUPLICATE_JOBS", "run_ids": list(error.run_ids)}
    return {"refused": error.code}


@operator_action
async def sync(request: Request, session: Session, form: Form) -> Response:
    """Start a fetch of every type of a portal not already in flight: `smuves sync --no-wait`."""
    ctx = context_of(request)
    portal_id = path_id(request, "portal_id")
    back = f"/portals?portal={portal_id}"
    portal = existing(
        await portal_get(ctx.db, portal_id), "No such portal", f"Portal {portal_id} is not known."
    )
    action = "portal_sync"
    target: dict[str, Any] = {"portal_id": portal_id}

    async def act(tx: Database) -> FetchStarted | AllDuplicateJobs | PortalNeedsReconnect:
        try:
            started = await start_fetch(
                tx, portal_id, max_attempts=ctx.settings.max_attempts, priority=JobPriority.ADMIN
            )
        except (AllDuplicateJobs, PortalNeedsReconnect) as error:
            await audit(tx, request, session, action, target, _sync_refusal(error))
            return error
        outcome = {
            "run_id": started.run.id,
            "content_types": [str(j.content_type) for j in started.jobs],
            "skipped": {str(t): run for t, run in started.skipped.items()},
        }
        await audit(tx, request, session, action, target, outcome)
        return started

    done = await when_confirmed(request, session, form, action, target, act)
    if done is None:
        return await confirmation_page(
            request,
            session,
            action,
            target,
            heading=f"Sync portal {portal_id}",
            description=(
                f"A fetch run of {portal.name or 'portal'} ({portal_id}) is enqueued for every "
                "content type that is not already being fetched. A running `smuves worker` "
                "works it; you will see its progress on the run's page."
            ),
            button=f"Sync portal {portal_id}",
            back=back,
            form=form,
        )
    if isinstance(done, AllDuplicateJobs | PortalNeedsReconnect):
        session.flash("error", str(done))
        return see_other(back)
    skipped = ", ".join(f"{t} (run {run})" for t, run in done.skipped.items())
    session.flash(
        "ok",
        f"run {done.run.id} enqueued: "
        + ", ".join(str(j.content_type) for j in done.jobs)
        + (f"; already being fetched: {skipped}" if skipped else ""),
    )
    return see_other(f"/runs/{done.run.id}")
