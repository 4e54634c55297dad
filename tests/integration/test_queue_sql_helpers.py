"""The rules the queue functions share, each written once: the lease-expiry predicate
(job_lease_expired; inlined by the planner, so claims still walk jobs_lease_idx), the cap on
a portal's running fetches (job_within_portal_cap; inlined too), the statement that takes a
job back to pending and ends its lease, and the notification of the people a run concerns."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from smuves_sync.db import Pool
from smuves_sync.models import Job, JobKind, JobStatus, RunStatus
from tests.support import T0, query
from tests.support.factories import Factory

MINUTE = timedelta(minutes=1)
LEASES: dict[str, Any] = {
    "fetch_lease": 5 * MINUTE,
    "export_lease": 2 * MINUTE,
    "push_lease": 4 * MINUTE,
}


async def _running(factory: Factory, kind: JobKind, silent_for: timedelta) -> Job:
    run = await factory.run(kind=kind, status=RunStatus.RUNNING)
    return await factory.job(run, status=JobStatus.RUNNING, locked_at=T0 - silent_for)


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", []):
        found.extend(_nodes(child))
    return found


def _index_scans(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for node in _nodes(plan) if "Index Name" in node]


async def test_a_lease_expires_after_its_kinds_lease(factory: Factory, admin_pool: Pool) -> None:
    fetch_3 = await _running(factory, JobKind.FETCH, 3 * MINUTE)
    fetch_6 = await _running(factory, JobKind.FETCH, 6 * MINUTE)
    export_1 = await _running(factory, JobKind.EXPORT, 1 * MINUTE)
    export_3 = await _running(factory, JobKind.EXPORT, 3 * MINUTE)
    push_3 = await _running(factory, JobKind.PUSH, 3 * MINUTE)
    push_5 = await _running(factory, JobKind.PUSH, 5 * MINUTE)
    pending = await factory.job()

    rows = await query(admin_pool, "queue_helpers_lease_expired", now=T0, **LEASES)

    assert {r["id"]: r["expired"] for r in rows} == {
        fetch_3.id: False,
        fetch_6.id: True,
        export_1.id: False,
        export_3.id: True,
        push_3.id: False,
        push_5.id: True,
        pending.id: False,
    }


async def test_the_lease_predicate_is_inlined_into_an_index_condition(
    factory: Factory, admin_pool: Pool
) -> None:
    await _running(factory, JobKind.FETCH, 6 * MINUTE)
    # A SECURITY DEFINER, a SET clause, plpgsql or IMMUTABLE (timestamptz - interval is only
    # stable) would each keep the planner from inlining job_lease_expired: the statement
    # would then read every row and call the function on each.
    async with admin_pool.connection() as conn, conn.transaction():
        await query(conn, "queue_helpers_no_seqscan")
        [plan] = await query(conn, "queue_helpers_explain_lease_expired", now=T0, **LEASES)
        [explained] = plan["QUERY PLAN"]

    [scan] = _index_scans(explained["Plan"])
    assert scan["Index Name"] == "jobs_lease_idx"
    assert scan["Index Cond"].startswith("(heartbeat_at <")


async def test_the_portal_cap_is_inlined_into_a_walk_of_the_portals_jobs_in_flight(
    factory: Factory, admin_pool: Pool
) -> None:
    await factory.job()
    # As with the lease predicate: anything that kept the planner from inlining
    # job_within_portal_cap would call it once per job a claim walks, each call planned
    # and run on its own.
    async with admin_pool.connection() as conn, conn.transaction():
        await query(conn, "queue_helpers_no_seqscan")
        [plan] = await query(conn, "queue_helpers_explain_portal_cap", now=T0)
        [explained] = plan["QUERY PLAN"]

    assert "Function Scan" not in {node["Node Type"] for node in _nodes(explained["Plan"])}
    [walk] = [
        s for s in _index_scans(explained["Plan"]) if s["Index Name"] == "jobs_in_flight_uniq"
    ]
    assert walk["Index Cond"].startswith("((portal_id = j.portal_id)")


async def test_a_job_back_in_pending_holds_no_lease(factory: Factory, admin_pool: Pool) -> None:
    job = await _running(factory, JobKind.FETCH, MINUTE)

    [pending] = await query(admin_pool, "queue_helpers_to_pending", job_id=job.id, cursor="c-7")

    assert pending["status"] == "pending"
    assert (pending["cursor"], pending["attempts"]) == ("c-7", job.attempts)
    lease = ("locked_at", "locked_by", "lease_token", "heartbeat_at")
    assert {c: pending[c] for c in lease} == dict.fromkeys(lease)


async def test_notices_go_to_the_runs_owner_else_the_portals(
    factory: Factory, admin_pool: Pool
) -> None:
    owner, starter = await factory.user(), await factory.user()
    portal = await factory.portal(owner)
    scheduled = await factory.run(portal)
    by_hand = await factory.run(portal, owner=starter)

    await query(
        admin_pool,
        "queue_helpers_notify",
        now=T0,
        run_ids=[by_hand.id, scheduled.id],
        kinds=["job_failed", "run_failed"],
        messages=["first", "second"],
    )

    rows = await query(admin_pool, "queue_helpers_notifications")
    assert [
        (r["user_id"], r["run_id"], r["kind"], r["message"], r["created_at"]) for r in rows
    ] == [
        (starter, by_hand.id, "job_failed", "first", T0),
        (owner, scheduled.id, "run_failed", "second", T0),
    ]
