"""A button acts only with the nonce its confirmation page issued: once, for that action on
that target, by that session, within its minutes; everything else shows the page again."""

from __future__ import annotations

import asyncio

import httpx
from starlette.applications import Starlette

from smuves_sync.dashboard import DashboardAuth
from smuves_sync.db import Database
from smuves_sync.db.jobs import job_get
from smuves_sync.db.operator_actions import OperatorAction, operator_action_recent
from smuves_sync.db.runs import run_get
from smuves_sync.models import JobStatus, RunStatus
from tests.integration.dashboard.conftest import (
    browser_at,
    confirmation_form,
    post_form,
    press_confirm,
    sign_in,
)
from tests.support import query
from tests.support.factories import Factory

RETRY = "/dead-letter/retry"


async def _actions(db: Database) -> list[OperatorAction]:
    """The audit trail of the buttons and their refusals, oldest first."""
    return [r for r in (await operator_action_recent(db))[::-1] if r.action != "sign_in"]


def _fields(page: str) -> dict[str, str]:
    """What the retry confirmation page's Confirm posts, but the CSRF token."""
    return {k: v for k, v in confirmation_form(page, RETRY) if k != "csrf"}


async def _status(db: Database, job_id: int) -> JobStatus:
    job = await job_get(db, job_id)
    assert job is not None
    return job.status


async def test_confirmed_yes_with_the_csrf_token_alone_acts_not(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.FAILED)

    forged = await post_form(dashboard, RETRY, signed_in, job_id=job.id, confirmed="yes")

    assert forged.status_code == 200 and "Confirm: Retry 1 job(s)" in forged.text
    assert await _status(db, job.id) is JobStatus.FAILED
    assert await _actions(db) == []


async def test_a_confirmation_acts_once_and_its_replay_is_refused(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    job = await factory.job(status=JobStatus.FAILED)
    asked = await post_form(dashboard, RETRY, signed_in, only=job.id)

    done = await press_confirm(dashboard, asked.text, RETRY)
    assert done.status_code == 303 and await _status(db, job.id) is JobStatus.PENDING
    await query(db.pool, "plant_jobs_status", run_id=job.run_id, status="failed")
    replay = await press_confirm(dashboard, asked.text, RETRY)

    assert replay.status_code == 200 and "Not done:" in replay.text
    assert "Confirm: Retry 1 job(s)" in replay.text
    assert await _status(db, job.id) is JobStatus.FAILED
    acted, refused = await _actions(db)
    assert acted.action == "job_retry"
    assert (refused.action, refused.actor, refused.outcome) == (
        "action_refused",
        "ada",
        {"refused": "confirmation"},
    )
    assert refused.target == {"path": RETRY, "action": "job_retry", "job_ids": [job.id]}
    # The page shown again carries a new nonce, which works.
    again = await press_confirm(dashboard, replay.text, RETRY)
    assert again.status_code == 303 and await _status(db, job.id) is JobStatus.PENDING


async def test_a_nonce_is_bound_to_its_target_and_action(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    shown = await factory.job(status=JobStatus.FAILED)
    other = await factory.job(status=JobStatus.FAILED)
    asked = await post_form(dashboard, RETRY, signed_in, only=shown.id)
    fields = _fields(asked.text)

    tampered = await post_form(dashboard, RETRY, signed_in, **{**fields, "job_id": other.id})
    elsewhere = await post_form(dashboard, "/dead-letter/requeue", signed_in, **fields)

    assert tampered.status_code == elsewhere.status_code == 200
    assert await _status(db, other.id) is JobStatus.FAILED
    assert await _status(db, shown.id) is JobStatus.FAILED
    assert [r.action for r in await _actions(db)] == ["action_refused", "action_refused"]


async def test_a_nonce_is_bound_to_its_session(
    dashboard_app: Starlette,
    dashboard: httpx.AsyncClient,
    signed_in: str,
    auth: DashboardAuth,
    db: Database,
    factory: Factory,
) -> None:
    job = await factory.job(status=JobStatus.FAILED)
    asked = await post_form(dashboard, RETRY, signed_in, only=job.id)
    fields = _fields(asked.text)

    async with browser_at(dashboard_app, "127.0.0.1") as colleague:
        csrf = await sign_in(colleague, actor="bea", token=auth.issue_link())
        borrowed = await post_form(colleague, RETRY, csrf, **fields)

    assert borrowed.status_code == 200 and "Not done:" in borrowed.text
    assert await _status(db, job.id) is JobStatus.FAILED


async def test_an_expired_confirmation_acts_not(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING)
    path = f"/runs/{run.id}/stop"
    asked = await post_form(dashboard, path, signed_in)
    assert "within 10 minutes" in asked.text
    await query(db.pool, "age_dashboard_confirmations")

    late = await press_confirm(dashboard, asked.text, path)

    assert late.status_code == 200 and "Not done:" in late.text
    still = await run_get(db, run.id)
    assert still is not None and still.status is RunStatus.RUNNING
    # Issuing the page again forgot the expired one.
    assert await query(db.pool, "count_dashboard_confirmations") == [{"n": 1}]


async def test_two_presses_of_one_confirmation_at_once_act_once(
    dashboard: httpx.AsyncClient, signed_in: str, db: Database, factory: Factory
) -> None:
    portal = await factory.portal()
    path = f"/portals/{portal}/sync"
    asked = await post_form(dashboard, path, signed_in)

    first, second = await asyncio.gather(
        press_confirm(dashboard, asked.text, path), press_confirm(dashboard, asked.text, path)
    )

    assert sorted([first.status_code, second.status_code]) == [200, 303]
    actions = [r.action for r in await _actions(db)]
    assert sorted(actions) == ["action_refused", "portal_sync"]
