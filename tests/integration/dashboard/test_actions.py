"""The dashboard's buttons: confirmation first, then the CLI's functions, an audit row each."""

from __future__ import annotations

import httpx

from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get, job_list_in_flight
from smuves_sync.db.operator_actions import OperatorAction, operator_action_recent
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from tests.integration.dashboard.conftest import confirm, post_form, press_confirm
from tests.support.factories import Factory


async def audit(db: Database) -> list[OperatorAction]:
    """The audit trail of the buttons (not of signing in), oldest first."""
    rows = await operator_action_recent(db)
    return [r for r in rows[::-1] if r.action != "sign_in"]


async def test_retry_asks_first_then_requeues_and_records_who_did_it(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.PARTIALLY_FAILED)
    job = await factory.failed_job(run, last_error="boom")

    asked = await post_form(dashboard, "/dead-letter/retry", signed_in, only=job.id)

    assert asked.status_code == 200 and "Confirm: Retry 1 job(s)" in asked.text
    assert f"job {job.id}: fetch site_page" in asked.text
    still = await job_get(db, job.id)
    assert still is not None and still.status is JobStatus.FAILED
    assert await audit(db) == []

    done = await press_confirm(dashboard, asked.text, "/dead-letter/retry")

    assert done.status_code == 303 and done.headers["location"] == "/dead-letter"
    after = await job_get(db, job.id)
    assert after is not None and after.status is JobStatus.PENDING
    assert (after.attempts, after.cursor, after.processed) == (0, "page-7", 700)
    reopened = await run_get(db, run.id)
    assert reopened is not None and reopened.status is RunStatus.PENDING
    (row,) = await audit(db)
    assert (row.actor, row.client, row.action) == ("ada", "127.0.0.1", "job_retry")
    assert row.target == {"job_ids": [job.id]}
    assert row.outcome["results"][0]["outcome"] == "requeued"
    assert row.session and len(row.session) == 16 and row.session not in signed_in
    shown = await dashboard.get("/dead-letter")
    assert f"job {job.id} requeued (was failed): now pending" in shown.text
    assert "job retry" in shown.text  # the audit trail on the page


async def test_retry_selected_requeues_each_and_names_what_it_could_not(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    old_run = await factory.run()
    new_run = await factory.run(old_run.portal_id)
    older = await factory.job(old_run, status=JobStatus.FAILED)
    newer = await factory.job(new_run, status=JobStatus.FAILED)
    blog = await factory.job(new_run, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED)

    await confirm(dashboard, "/dead-letter/retry", signed_in, job_id=[older.id, newer.id, blog.id])

    found = [await job_get(db, j.id) for j in (older, newer, blog)]
    statuses = [job.status if job else None for job in found]
    # Newest first, as retry-failed: the older job of the same type is blocked by the newer.
    assert statuses == [JobStatus.FAILED, JobStatus.PENDING, JobStatus.PENDING]
    page = (await dashboard.get("/dead-letter")).text
    assert f"job {older.id} not requeued: job {newer.id} of run {new_run.id}" in page
    (row,) = await audit(db)
    assert row.target == {"job_ids": [blog.id, newer.id, older.id]}
    assert [r["outcome"] for r in row.outcome["results"]] == ["requeued", "requeued", "in_flight"]


async def test_nothing_selected_is_refused_with_a_message(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database
) -> None:
    response = await post_form(dashboard, "/dead-letter/retry", signed_in)

    assert response.status_code == 303
    assert "no job selected" in (await dashboard.get("/dead-letter")).text
    assert await audit(db) == []


async def test_requeue_from_start_forgets_the_progress(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.STOPPED, cursor="page-3", processed=300)

    asked = await post_form(dashboard, "/dead-letter/requeue", signed_in, only=job.id)
    assert "saved progress is forgotten" in asked.text
    await press_confirm(dashboard, asked.text, "/dead-letter/requeue")

    after = await job_get(db, job.id)
    assert after is not None and after.status is JobStatus.PENDING
    assert (after.cursor, after.processed) == (None, 0)
    (row,) = await audit(db)
    assert row.action == "job_requeue_from_start"


async def test_retry_all_goes_through_retry_failed_for_the_portal(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    run = await factory.run()
    mine = [
        await factory.job(run, content_type=t, status=JobStatus.FAILED)
        for t in (ContentType.SITE_PAGE, ContentType.BLOG_POST)
    ]
    elsewhere = await factory.job(status=JobStatus.FAILED)

    asked = await post_form(dashboard, "/dead-letter/retry-all", signed_in, portal=run.portal_id)
    assert "2 failed job(s) of portal" in asked.text
    await press_confirm(dashboard, asked.text, "/dead-letter/retry-all")

    for job in mine:
        found = await job_get(db, job.id)
        assert found is not None and found.status is JobStatus.PENDING
    untouched = await job_get(db, elsewhere.id)
    assert untouched is not None and untouched.status is JobStatus.FAILED
    (row,) = await audit(db)
    assert (row.action, row.target) == (
        "jobs_retry_failed",
        {"portal_id": run.portal_id, "run_id": None},
    )


async def test_stop_asks_then_stops_the_run(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING)

    asked = await post_form(dashboard, f"/runs/{run.id}/stop", signed_in)
    assert "Confirm: Stop run" in asked.text
    done = await press_confirm(dashboard, asked.text, f"/runs/{run.id}/stop")

    assert done.headers["location"] == f"/runs/{run.id}"
    stopped = await run_get(db, run.id)
    assert stopped is not None and stopped.status is RunStatus.STOPPED
    after = await job_get(db, job.id)
    assert after is not None and after.status is JobStatus.STOPPED
    page = (await dashboard.get(f"/runs/{run.id}")).text
    assert f"run {run.id} stopped (now stopped)" in page
    assert f'action="/runs/{run.id}/stop"' not in page  # a finished run has no Stop
    again = await post_form(dashboard, f"/runs/{run.id}/stop", signed_in)
    assert again.status_code == 303
    assert "has already finished" in (await dashboard.get(f"/runs/{run.id}")).text
    (row,) = await audit(db)
    assert (row.action, row.target, row.outcome) == (
        "run_stop",
        {"run_id": run.id},
        {"status": "stopped"},
    )


async def test_sync_starts_a_fetch_run_and_refuses_a_duplicate(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    portal = await factory.portal(name="Shop")

    asked = await post_form(dashboard, f"/portals/{portal}/sync", signed_in)
    assert "Confirm: Sync portal" in asked.text
    assert await job_list_in_flight(db, portal, JobKind.FETCH) == []
    done = await press_confirm(dashboard, asked.text, f"/portals/{portal}/sync")

    location = done.headers["location"]
    assert location.startswith("/runs/")
    run = await run_get(db, int(location.rsplit("/", 1)[1]))
    assert run is not None and run.portal_id == portal and run.owner_id is None
    assert len(run.content_types) == len(ContentType)
    twice = await confirm(dashboard, f"/portals/{portal}/sync", signed_in)
    assert twice.headers["location"] == f"/portals?portal={portal}"
    assert "ALL_DUPLICATE_JOBS" in (await dashboard.get(twice.headers["location"])).text
    first, second = await audit(db)
    assert first.outcome["run_id"] == run.id
    assert second.outcome == {"refused": "ALL_DUPLICATE_JOBS", "run_ids": [run.id]}
    missing = await post_form(dashboard, "/portals/9999/sync", signed_in)
    assert missing.status_code == 404


async def test_an_action_sends_the_browser_back_only_within_the_dashboard(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    for back, expected in (
        ("/dead-letter?portal=7", "/dead-letter?portal=7"),
        ("//evil.example/", "/dead-letter"),
        ("/\\evil.example/", "/dead-letter"),
        ("https://evil.example/", "/dead-letter"),
    ):
        job = await factory.job(status=JobStatus.FAILED)
        done = await confirm(dashboard, "/dead-letter/retry", signed_in, job_id=job.id, back=back)
        assert done.headers["location"] == expected, back
