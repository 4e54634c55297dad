"""The dashboard's pages (GET): overview, runs, one run, dead letter, portals.

Each page reads through the data layer's noun functions inside one `Database.custom_plans`
transaction and renders a template; no SQL here. Query parameters are
validated: a bad one answers 400 and shows what was wrong.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.dashboard.auth import Session
from smuves_sync.dashboard.causes import causes_of
from smuves_sync.dashboard.charts import minute_chart
from smuves_sync.dashboard.web import (
    COUNT_CAP,
    context_of,
    existing,
    int_or_none,
    operator_page,
    page,
    path_id,
)
from smuves_sync.db import Database
from smuves_sync.db.content import content_count_by_type
from smuves_sync.db.hubspot_minutes import hubspot_per_minute
from smuves_sync.db.jobs import job_dead_count, job_dead_page
from smuves_sync.db.notifications import notification_of_run
from smuves_sync.db.operator_actions import operator_action_recent
from smuves_sync.db.portals import portal_fetch_state, portal_get, portal_page
from smuves_sync.db.runs import run_count_in_flight, run_in_flight, run_list
from smuves_sync.db.runs import run_detail as run_with_jobs
from smuves_sync.db.schedules import schedule_of_portals
from smuves_sync.db.stats import (
    StateCount,
    job_completed_per_minute,
    job_count_by_state,
    job_oldest_due,
)
from smuves_sync.db.workers import NO_WORKER, run_waiting_for_worker, worker_list
from smuves_sync.errors import InvalidInput
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus

RUNS_PER_PAGE = 50
DEAD_PER_PAGE = 50
PORTALS_PER_PAGE = 20
IN_FLIGHT_SHOWN = 10
RECENT_FAILURES = 8


def _choice(
    text: str | None, allowed: type[JobKind] | type[RunStatus] | type[ContentType], what: str
) -> str | None:
    if not text:
        return None
    if text not in {str(member) for member in allowed}:
        raise InvalidInput(f"{what}: unknown value {text!r}")
    return text


def _date(text: str | None, what: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{what}: expected a date such as 2026-03-01, got {text!r}") from None


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


# -- overview -----------------------------------------------------------------------------------


async def overview_values(db: Database) -> dict[str, Any]:
    """What the overview's live parts show: counts, ages, runs in flight, workers."""
    async with db.custom_plans() as tx:
        counts = await job_count_by_state(tx, cap=COUNT_CAP)
        ages = await job_oldest_due(tx)
        in_flight = await run_in_flight(tx, limit=IN_FLIGHT_SHOWN)
        open_runs = await run_count_in_flight(tx)
        workers = await worker_list(tx)
        waiting = await run_waiting_for_worker(tx, [p.run.id for p in in_flight])
    table: dict[JobKind, dict[str, StateCount]] = defaultdict(dict)
    for count in counts:
        table[count.kind][str(count.state)] = count
    return {
        "counts": {kind: table[kind] for kind in JobKind},
        "ages": ages,
        "in_flight": in_flight,
        "open_runs": open_runs,
        "cap": COUNT_CAP,
        "workers": workers,
        "waiting": waiting,
        "no_worker": NO_WORKER,
    }


@operator_page
async def overview(request: Request, session: Session) -> Response:
    """Queue counts, the last hour per minute, runs in flight, recent failures."""
    db = context_of(request).db
    values = await overview_values(db)
    async with db.custom_plans() as tx:
        completed = await job_completed_per_minute(tx)
        hubspot = await hubspot_per_minute(tx)
        failures = await job_dead_page(tx, limit=RECENT_FAILURES)
    charts = [
        minute_chart(
            [(p.minute, p.value) for p in completed],
            chart_id="chart-completed",
            title="Jobs completed per minute",
            unit="jobs completed",
        ),
        minute_chart(
            [(h.minute, h.requests) for h in hubspot],
            chart_id="chart-requests",
            title="HubSpot requests per minute",
            unit="requests",
        ),
        minute_chart(
            [(h.minute, h.rate_limited) for h in hubspot],
            chart_id="chart-429",
            title="HubSpot 429 answers (rate limited) per minute",
            unit="429 answers",
        ),
    ]
    return page(
        request,
        session,
        "overview.html",
        active="overview",
        charts=charts,
        failures=failures,
        **values,
    )


# -- runs ---------------------------------------------------------------------------------------


def _cursor(text: str | None) -> tuple[datetime, int] | None:
    if not text:
        return None
    created, _, run_id = text.rpartition(",")
    try:
        moment = datetime.fromisoformat(created)
        number = int(run_id)
    except ValueError:
        raise InvalidInput(f"before: not a position in the list: {text!r}") from None
    if moment.tzinfo is None:
        raise InvalidInput(f"before: not a position in the list: {text!r}")
    return moment, number


@operator_page
async def runs(request: Request, session: Session) -> Response:
    """Runs newest first, filtered by portal, kind, status and creation date; keyset pages."""
    q = request.query_params
    created_from = _date(q.get("from"), "from")
    created_to = _date(q.get("to"), "to")
    kind = _choice(q.get("kind"), JobKind, "kind")
    status = _choice(q.get("status"), RunStatus, "status")
    before = _cursor(q.get("before"))
    async with context_of(request).db.custom_plans() as tx:
        found = await run_list(
            tx,
            portal_id=int_or_none(q.get("portal"), "portal"),
            statuses=[RunStatus(status)] if status else None,
            kind=JobKind(kind) if kind else None,
            created_from=_midnight(created_from) if created_from else None,
            created_to=_midnight(created_to) + timedelta(days=1) if created_to else None,
            before=before,
            limit=RUNS_PER_PAGE + 1,
        )
        shown = found[:RUNS_PER_PAGE]
        waiting = await run_waiting_for_worker(tx, [o.run.id for o in shown])
    kept = {k: q.get(k) for k in ("portal", "kind", "status", "from", "to") if q.get(k)}
    next_url = None
    if len(found) > RUNS_PER_PAGE:
        last = shown[-1].run
        next_url = "/runs?" + urlencode(
            {**kept, "before": f"{last.created_at.isoformat()},{last.id}"}
        )
    return page(
        request,
        session,
        "runs.html",
        active="runs",
        runs=shown,
        waiting=waiting,
        no_worker=NO_WORKER,
        query={k: q.get(k, "") for k in ("portal", "kind", "status", "from", "to")},
        kinds=[str(k) for k in JobKind],
        statuses=[str(s) for s in RunStatus],
        before=before,
        next_url=next_url,
        first_url="/runs?" + urlencode(kept) if kept else "/runs",
    )


async def run_values(db: Database, run_id: int) -> dict[str, Any] | None:
    """A run, its portal's name, its jobs, their errors by cause and whether it waits for a
    worker, read together; None when there is no such run."""
    async with db.custom_plans() as tx:
        found = await run_with_jobs(tx, run_id, operator=True)
        if found is None:
            return None
        run, jobs = found
        portal = await portal_get(tx, run.portal_id)
        waiting = bool(await run_waiting_for_worker(tx, [run_id]))
    causes = causes_of(jobs)
    return {
        "run": run,
        "portal_name": portal.name if portal else "",
        "jobs": jobs,
        "causes": causes,
        # job id -> the number of its cause in the list of causes
        "cause_of": {job.id: n for n, cause in enumerate(causes, 1) for job in cause.jobs},
        "no_worker": NO_WORKER if waiting else None,
    }


@operator_page
async def run_detail(request: Request, session: Session) -> Response:
    """One run: its jobs' bars (live), attempts, lease holders, cursors, errors by cause,
    notices."""
    run_id = path_id(request, "run_id")
    db = context_of(request).db
    values = existing(
        await run_values(db, run_id), "No such run", f"Run {run_id} does not exist (or was pruned)."
    )
    async with db.custom_plans() as tx:
        notes = await notification_of_run(tx, run_id)
    return page(request, session, "run.html", active="runs", notifications=notes, **values)


# -- dead letter --------------------------------------------------------------------------------


@operator_page
async def dead_letter(request: Request, session: Session) -> Response:
    """Failed (or stopped) jobs with their error and advice; Retry, Requeue, Retry all."""
    q = request.query_params
    status_text = q.get("status") or "failed"
    if status_text not in ("failed", "stopped"):
        raise InvalidInput(f"status: expected failed or stopped, got {status_text!r}")
    status = JobStatus(status_text)
    portal_id = int_or_none(q.get("portal"), "portal")
    run_id = int_or_none(q.get("run"), "run")
    type_text = _choice(q.get("type"), ContentType, "type")
    content_type = ContentType(type_text) if type_text else None
    before_id = int_or_none(q.get("before"), "before")
    async with context_of(request).db.custom_plans() as tx:
        found = await job_dead_page(
            tx,
            status=status,
            portal_id=portal_id,
            run_id=run_id,
            content_type=content_type,
            before_id=before_id,
            limit=DEAD_PER_PAGE + 1,
        )
        total, capped = await job_dead_count(
            tx,
            cap=COUNT_CAP,
            status=status,
            portal_id=portal_id,
            run_id=run_id,
            content_type=content_type,
        )
        actions = await operator_action_recent(tx, limit=10)
    shown = found[:DEAD_PER_PAGE]
    kept = {k: q.get(k) for k in ("status", "portal", "run", "type") if q.get(k)}
    next_url = None
    if len(found) > DEAD_PER_PAGE:
        next_url = "/dead-letter?" + urlencode({**kept, "before": shown[-1].job.id})
    here = "/dead-letter?" + urlencode(kept) if kept else "/dead-letter"
    return page(
        request,
        session,
        "dead_letter.html",
        active="dead",
        jobs=shown,
        total=total,
        capped=capped,
        actions=actions,
        query={
            "status": status_text,
            "portal": q.get("portal", ""),
            "run": q.get("run", ""),
            "type": q.get("type", ""),
            "before": q.get("before", ""),
        },
        content_types=[str(t) for t in ContentType],
        next_url=next_url,
        first_url=here,
        back=here,
    )


# -- portals ------------------------------------------------------------------------------------


@operator_page
async def portals(request: Request, session: Session) -> Response:
    """Each portal: last sync per type, what runs now, stored counts, schedules, Sync."""
    q = request.query_params
    portal_id = int_or_none(q.get("portal"), "portal")
    after_id = int_or_none(q.get("after"), "after")
    async with context_of(request).db.custom_plans() as tx:
        found = await portal_page(
            tx, portal_id=portal_id, after_id=after_id, limit=PORTALS_PER_PAGE + 1
        )
        shown = found[:PORTALS_PER_PAGE]
        ids = [p.id for p in shown]
        states = await portal_fetch_state(tx, ids, list(ContentType))
        counts = await content_count_by_type(tx, ids)
        schedules = await schedule_of_portals(tx, ids)
    by_portal: dict[int, list[Any]] = {p.id: [] for p in shown}
    for state in states:
        by_portal[state.portal_id].append(state)
    schedules_of: dict[int, list[Any]] = {p.id: [] for p in shown}
    for schedule in schedules:
        schedules_of[schedule.portal_id].append(schedule)
    next_url = None
    if len(found) > PORTALS_PER_PAGE:
        next_url = "/portals?" + urlencode({"after": shown[-1].id})
    return page(
        request,
        session,
        "portals.html",
        active="portals",
        portals=shown,
        states=by_portal,
        counts=counts,
        schedules=schedules_of,
        query={"portal": q.get("portal", ""), "after": q.get("after", "")},
        next_url=next_url,
    )
