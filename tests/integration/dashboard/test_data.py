"""The dashboard's reads and writes in the data layer's noun modules, against planted rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from smuves_sync.db import Database, Pool
from smuves_sync.db.content import content_count_by_type
from smuves_sync.db.hubspot_minutes import hubspot_minute_record, hubspot_per_minute
from smuves_sync.db.jobs import job_dead_count, job_dead_page, job_get
from smuves_sync.db.notifications import notification_of_run
from smuves_sync.db.operator_actions import operator_action_recent, operator_action_record
from smuves_sync.db.portals import portal_fetch_state, portal_page
from smuves_sync.db.runs import run_count_in_flight, run_in_flight, run_list, run_operator_stop
from smuves_sync.db.schedules import schedule_list, schedule_of_portals
from smuves_sync.db.stats import (
    JobState,
    job_completed_per_minute,
    job_count_by_state,
    job_oldest_due,
)
from smuves_sync.errors import DatabaseError, DatabaseRefused
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from tests.support import query
from tests.support.factories import Factory

NOW = datetime(2026, 3, 1, 12, 30, 20, tzinfo=UTC)


async def test_counts_by_kind_and_state_stop_at_the_cap(db: Database, factory: Factory) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    export = await factory.run(run.portal_id, kind=JobKind.EXPORT, status=RunStatus.RUNNING)
    types = list(ContentType)
    for content_type in types[:3]:
        await factory.job(run, content_type=content_type, status=JobStatus.FAILED)
    await factory.job(run, content_type=types[3], status=JobStatus.RUNNING, locked_at=NOW)
    await factory.job(run, content_type=types[4], run_after=NOW - timedelta(minutes=5))
    await factory.job(export, run_after=NOW + timedelta(hours=1))
    for minutes in (10, 30, 90, 60 * 30):
        await factory.job(
            export, status=JobStatus.COMPLETED, finished_at=NOW - timedelta(minutes=minutes)
        )
    await factory.job(export, status=JobStatus.STOPPED, finished_at=NOW)

    async with db.custom_plans() as tx:
        counts = await job_count_by_state(tx, cap=2, now=NOW)
        ages = await job_oldest_due(tx, now=NOW)

    found = {(c.kind, c.state): (c.jobs, c.capped) for c in counts}
    fetch, export_ = JobKind.FETCH, JobKind.EXPORT
    assert found[fetch, JobState.FAILED] == (2, True)  # three, above the cap of two
    assert found[fetch, JobState.RUNNING] == (1, False)
    assert found[fetch, JobState.PENDING_DUE] == (1, False)
    assert found[export_, JobState.PENDING_WAITING] == (1, False)
    assert found[export_, JobState.PENDING_DUE] == (0, False)
    assert found[export_, JobState.COMPLETED_HOUR] == (2, False)
    assert found[export_, JobState.COMPLETED_DAY] == (2, True)
    assert found[export_, JobState.STOPPED] == (1, False)
    assert len(counts) == len(JobKind) * len(JobState)
    assert ages == {fetch: timedelta(minutes=5), export_: None, JobKind.PUSH: None}


async def test_completed_per_minute_has_every_minute_oldest_first(
    db: Database, factory: Factory
) -> None:
    run = await factory.run()
    for seconds in (5, 15, 75, 59 * 60 + 10, 61 * 60):
        await factory.job(
            run, status=JobStatus.COMPLETED, finished_at=NOW - timedelta(seconds=seconds)
        )
    await factory.job(run, status=JobStatus.FAILED, finished_at=NOW)

    minutes = await job_completed_per_minute(db, minutes=60, now=NOW)

    assert len(minutes) == 60
    assert minutes[-1].minute == NOW.replace(second=0)
    assert minutes[0].minute == NOW.replace(second=0) - timedelta(minutes=59)
    values = {m.minute: m.value for m in minutes}
    assert values[NOW.replace(second=0)] == 2  # 12:30:15 and 12:30:05
    assert values[datetime(2026, 3, 1, 12, 29, tzinfo=UTC)] == 1
    assert values[datetime(2026, 3, 1, 11, 31, tzinfo=UTC)] == 1  # 59 min 10 s ago
    assert sum(values.values()) == 4  # 61 minutes ago is outside the hour


async def test_dead_letter_pages_newest_first_and_filters(db: Database, factory: Factory) -> None:
    first = await factory.run()
    other = await factory.run()
    failed = [
        await factory.job(first, content_type=t, status=JobStatus.FAILED, last_error="boom")
        for t in list(ContentType)[:3]
    ]
    elsewhere = await factory.job(other, status=JobStatus.FAILED)
    stopped = await factory.job(other, content_type=ContentType.BLOG_POST, status=JobStatus.STOPPED)

    page = await job_dead_page(db, limit=2)
    assert [d.job.id for d in page] == [elsewhere.id, failed[2].id]
    rest = await job_dead_page(db, before_id=page[-1].job.id, limit=2)
    assert [d.job.id for d in rest] == [failed[1].id, failed[0].id]
    assert page[0].portal_name == f"portal {other.portal_id}"

    mine = await job_dead_page(db, portal_id=first.portal_id, content_type=ContentType.SITE_PAGE)
    assert [d.job.id for d in mine] == [failed[0].id]
    assert [d.job.id for d in await job_dead_page(db, status=JobStatus.STOPPED)] == [stopped.id]
    assert await job_dead_count(db, cap=10) == (4, False)
    assert await job_dead_count(db, run_id=first.id, cap=2) == (2, True)
    with pytest.raises(ValueError, match="dead letter"):
        await job_dead_page(db, status=JobStatus.PENDING)


async def test_run_list_filters_and_keyset(db: Database, factory: Factory) -> None:
    portal = await factory.portal(name="Acme")
    base = datetime(2026, 2, 1, tzinfo=UTC)
    runs = []
    for day in range(5):
        run = await factory.run(
            portal,
            status=RunStatus.FAILED if day % 2 else RunStatus.COMPLETED,
            created_at=base + timedelta(days=day),
        )
        await factory.job(run, status=JobStatus.COMPLETED, total=10, processed=10)
        await factory.job(
            run, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED, processed=3
        )
        runs.append(run)
    export = await factory.run(portal, kind=JobKind.EXPORT, created_at=base + timedelta(days=9))
    other = await factory.run(created_at=base + timedelta(days=7))

    everything = await run_list(db, limit=10)
    assert [s.run.id for s in everything] == [export.id, other.id] + [r.id for r in runs[::-1]]
    newest = everything[2]
    assert (newest.jobs, newest.jobs_completed, newest.jobs_failed) == (2, 1, 1)
    assert (newest.processed, newest.total) == (13, 10)
    assert newest.portal_name == "Acme"

    first = await run_list(db, portal_id=portal, limit=3)
    after = first[-1].run
    second = await run_list(db, portal_id=portal, before=(after.created_at, after.id), limit=3)
    assert [s.run.id for s in first + second] == [export.id] + [r.id for r in runs[::-1]]

    failed = await run_list(db, statuses=[RunStatus.FAILED])
    assert [s.run.id for s in failed] == [runs[3].id, runs[1].id]
    exports = await run_list(db, kind=JobKind.EXPORT)
    assert [s.run.id for s in exports] == [export.id]
    window = await run_list(
        db, created_from=base + timedelta(days=1), created_to=base + timedelta(days=3)
    )
    assert [s.run.id for s in window] == [runs[2].id, runs[1].id]


async def test_runs_in_flight_with_their_jobs(db: Database, factory: Factory) -> None:
    done = await factory.run(status=RunStatus.COMPLETED)
    await factory.job(done, status=JobStatus.COMPLETED)
    older = await factory.run(status=RunStatus.RUNNING)
    newer = await factory.run(status=RunStatus.PENDING)
    jobs = [
        await factory.job(older, status=JobStatus.RUNNING, total=100, processed=40),
        await factory.job(older, content_type=ContentType.BLOG_POST),
        await factory.job(newer),
    ]

    found = await run_in_flight(db, limit=5)

    assert [(p.run.id, [j.id for j in p.jobs]) for p in found] == [
        (newer.id, [jobs[2].id]),
        (older.id, [jobs[0].id, jobs[1].id]),
    ]
    assert found[1].jobs[0].processed == 40 and found[1].run.status is RunStatus.RUNNING
    assert [p.run.id for p in await run_in_flight(db, limit=1)] == [newer.id]
    assert await run_count_in_flight(db) == 2


async def test_the_operator_stops_any_run(db: Database, factory: Factory) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    running = await factory.job(run, status=JobStatus.RUNNING)
    done = await factory.job(run, content_type=ContentType.BLOG_POST, status=JobStatus.COMPLETED)

    stopped = await run_operator_stop(db, run.id)

    assert stopped is not None and stopped.status is RunStatus.STOPPED
    job = await job_get(db, running.id)
    assert job is not None and job.status is JobStatus.STOPPED
    assert job.last_error == "stopped by an operator"
    assert job.locked_by == "factory"  # who ran it stays on record
    unchanged = await job_get(db, done.id)
    assert unchanged is not None and unchanged.status is JobStatus.COMPLETED
    assert await run_operator_stop(db, 999_999) is None


async def test_notifications_of_a_run(db: Database, factory: Factory) -> None:
    user = await factory.user("ops@example.com")
    run = await factory.run(owner=user)
    first = await factory.notification(user, run)
    second = await factory.notification(user, run, kind="run_completed")
    await factory.notification(user)

    found = await notification_of_run(db, run.id)

    assert [(n.id, n.email, n.kind) for n in found] == [
        (second, "ops@example.com", "run_completed"),
        (first, "ops@example.com", "run_finished"),
    ]


async def test_portals_their_fetch_state_counts_and_schedules(
    db: Database, factory: Factory
) -> None:
    a = await factory.portal(portal_id=501, name="A", token_encrypted=b"x")
    b = await factory.portal(portal_id=502, name="B")
    early, late = datetime(2026, 2, 1, tzinfo=UTC), datetime(2026, 2, 2, tzinfo=UTC)
    old = await factory.run(a, status=RunStatus.COMPLETED)
    done = await factory.job(
        old, status=JobStatus.COMPLETED, finished_at=early, processed=120, total=120
    )
    newer = await factory.run(a, status=RunStatus.FAILED)
    failed = await factory.job(newer, status=JobStatus.FAILED, finished_at=late, last_error="x")
    running = await factory.run(a, status=RunStatus.RUNNING)
    now = await factory.job(
        running, content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING, total=50
    )
    await factory.content_item(old)
    await factory.content_item(old)
    schedule = await factory.schedule(b, next_run_at=late)

    async with db.custom_plans() as tx:
        portals = await portal_page(tx)
        state = await portal_fetch_state(tx, [a, b], [ContentType.SITE_PAGE, ContentType.BLOG_POST])
        counts = await content_count_by_type(tx, [a, b])
        schedules = await schedule_of_portals(tx, [a, b])

    assert [(p.id, p.name, p.has_token) for p in portals] == [(501, "A", True), (502, "B", False)]
    assert await portal_page(db, after_id=501) == portals[1:]
    assert [(s.portal_id, s.content_type) for s in state] == [
        (501, ContentType.SITE_PAGE),
        (501, ContentType.BLOG_POST),
        (502, ContentType.SITE_PAGE),
        (502, ContentType.BLOG_POST),
    ]
    site = state[0]
    assert (site.last_job_id, site.last_status, site.last_error) == (
        failed.id,
        JobStatus.FAILED,
        "x",
    )
    assert (site.done_job_id, site.done_finished_at, site.done_processed) == (done.id, early, 120)
    assert site.open_job_id is None
    blog = state[1]
    assert (blog.last_job_id, blog.done_job_id) == (None, None)
    assert (blog.open_job_id, blog.open_status, blog.open_total) == (
        now.id,
        JobStatus.RUNNING,
        50,
    )
    assert counts[a, ContentType.SITE_PAGE].live == 2
    assert (b, ContentType.SITE_PAGE) not in counts
    assert [(s.id, s.next_run_at) for s in schedules] == [(schedule, late)]
    assert await schedule_list(db, portal_id=b) == schedules
    assert await schedule_list(db, portal_id=a) == []


async def test_hubspot_minutes_add_up_per_minute(db: Database, worker_db: Database) -> None:
    await hubspot_minute_record(worker_db, requests=10, rate_limited=1, now=NOW)
    await hubspot_minute_record(
        worker_db, requests=5, rate_limited=0, now=NOW + timedelta(seconds=30)
    )
    await hubspot_minute_record(db, requests=7, rate_limited=2, now=NOW - timedelta(minutes=2))

    minutes = await hubspot_per_minute(db, minutes=5, now=NOW)

    assert [(m.minute.minute, m.requests, m.rate_limited) for m in minutes] == [
        (26, 0, 0),
        (27, 0, 0),
        (28, 7, 2),
        (29, 0, 0),
        (30, 15, 1),
    ]
    with pytest.raises(DatabaseError, match="must be >= 0"):
        await hubspot_minute_record(db, requests=-1, rate_limited=0)
    # Workers write through the function only: they cannot read what others wrote.
    with pytest.raises(DatabaseRefused):
        await hubspot_per_minute(worker_db, now=NOW)


async def test_hubspot_minutes_older_than_a_week_are_forgotten(db: Database) -> None:
    await hubspot_minute_record(db, requests=3, rate_limited=0, now=NOW - timedelta(days=8))
    await hubspot_minute_record(db, requests=1, rate_limited=0, now=NOW)

    week = await hubspot_per_minute(db, minutes=8 * 24 * 60, now=NOW)

    assert sum(m.requests for m in week) == 1


async def test_operator_actions_are_recorded_newest_first(db: Database) -> None:
    first = await operator_action_record(
        db,
        actor="ada",
        client="127.0.0.1",
        session="abc",
        action="job_retry",
        target={"job_ids": [3, 2]},
        outcome={"results": []},
    )
    second = await operator_action_record(
        db, actor="bob", action="run_stop", target={"run_id": 7}, outcome={"status": "stopped"}
    )

    found = await operator_action_recent(db)

    assert [a.id for a in found] == [second.id, first.id]
    assert found[1].target == {"job_ids": [3, 2]} and found[1].client == "127.0.0.1"
    assert found[0].outcome == {"status": "stopped"} and found[0].actor == "bob"
    with pytest.raises(DatabaseError, match="operator_actions_actor_present"):
        await operator_action_record(db, actor="", action="x", target={}, outcome={})


async def plan(admin_pool: Pool, name: str) -> str:
    """The plan of check `name` with sequential scans off (any usable index is used)."""
    async with admin_pool.connection() as conn, conn.transaction():
        await query(conn, "check_plans_off_seqscan")
        return "\n".join(row["QUERY PLAN"] for row in await query(conn, name))


async def test_the_completed_index_serves_time_ranges_only(admin_pool: Pool) -> None:
    # complete_jobs looks up its batch with `status = 'completed'` under a generic plan: an
    # index usable for that alone would be walked whole for every batch.
    assert "jobs_completed_idx" not in await plan(admin_pool, "check_plan_completed_by_status_only")
    assert "jobs_completed_idx" not in await plan(
        admin_pool, "check_plan_completed_status_only_scan"
    )
    assert "jobs_completed_idx" in await plan(admin_pool, "check_plan_completed_last_hour")
