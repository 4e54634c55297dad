"""Member roles: a portal's viewers read, its owners and editors also start and stop runs.

The database decides (editor_portal_ids in the runs and exports policies, enqueue_job and
stop_run), so a viewer's session is refused below the API too.
"""

from __future__ import annotations

import httpx
import psycopg
import pytest

from smuves_sync.db import Pool
from smuves_sync.models import JobKind, JobStatus, RunStatus
from tests.integration.api.conftest import User, new_user
from tests.support import query
from tests.support.factories import Factory
from tests.support.sql import query_as

PORTAL = 4100


@pytest.fixture
async def viewer(factory: Factory, alice: User) -> User:
    """A viewer of alice's portal PORTAL."""
    await factory.portal(alice.id, portal_id=PORTAL)
    user = await new_user(factory, "viewer")
    await factory.member(PORTAL, user.id, "viewer")
    return user


async def _runs(factory: Factory) -> int:
    rows = await query(factory.pool, "check_runs_of_portal", portal_id=PORTAL)
    return int(rows[0]["runs"])


async def test_a_viewer_may_not_start_a_fetch_or_an_export_and_nothing_is_created(
    client: httpx.AsyncClient, factory: Factory, viewer: User
) -> None:
    fetch = await client.post(f"/v1/portals/{PORTAL}/fetches", headers=viewer.headers)
    export = await client.post(
        f"/v1/portals/{PORTAL}/exports", json={"content_type": "site_page"}, headers=viewer.headers
    )

    for refused in (fetch, export):
        assert refused.status_code == 403, refused.text
        body = refused.json()
        assert body["code"] == "FORBIDDEN"
        assert "owners and editors" in body["message"]
    assert await _runs(factory) == 0


async def test_a_viewer_may_not_stop_a_run_and_it_goes_on(
    client: httpx.AsyncClient, factory: Factory, alice: User, viewer: User
) -> None:
    run = await factory.run(PORTAL, owner=alice.id, status=RunStatus.RUNNING)
    job = await factory.job(run, status=JobStatus.RUNNING)

    refused = await client.post(f"/v1/runs/{run.id}/stop", headers=viewer.headers)

    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "FORBIDDEN"
    assert f"portal {PORTAL}" in refused.json()["message"]
    jobs = await query(factory.pool, "check_jobs_of_run", run_id=run.id)
    assert [j["status"] for j in jobs] == ["running"] and jobs[0]["id"] == job.id


async def test_a_viewer_still_reads_what_it_read(
    client: httpx.AsyncClient, factory: Factory, alice: User, viewer: User
) -> None:
    run = await factory.run(PORTAL, owner=alice.id, status=RunStatus.COMPLETED)
    await factory.content_item(run)

    portals = await client.get("/v1/portals", headers=viewer.headers)
    assert [(p["id"], p["role"]) for p in portals.json()["items"]] == [(PORTAL, "viewer")]
    assert (await client.get(f"/v1/runs/{run.id}", headers=viewer.headers)).status_code == 200
    content = await client.get(
        f"/v1/portals/{PORTAL}/content?type=site_page", headers=viewer.headers
    )
    assert content.status_code == 200 and len(content.json()["items"]) == 1


@pytest.mark.parametrize("role", ["editor", "owner"])
async def test_editors_and_owners_start_and_stop_runs(
    client: httpx.AsyncClient, factory: Factory, alice: User, role: str
) -> None:
    await factory.portal(alice.id, portal_id=PORTAL)
    if role == "owner":
        member = alice
    else:
        member = await new_user(factory, role)
        await factory.member(PORTAL, member.id, role)

    fetch = await client.post(
        f"/v1/portals/{PORTAL}/fetches",
        json={"content_types": ["blog_post"]},
        headers=member.headers,
    )
    export = await client.post(
        f"/v1/portals/{PORTAL}/exports", json={"content_type": "site_page"}, headers=member.headers
    )
    assert (fetch.status_code, export.status_code) == (202, 202), (fetch.text, export.text)
    run_id = fetch.json()["run"]["id"]
    stopped = await client.post(f"/v1/runs/{run_id}/stop", headers=member.headers)
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    assert await _runs(factory) == 2


async def test_a_viewers_app_session_cannot_insert_a_run_or_enqueue_a_job(
    api_login_pool: Pool, factory: Factory, alice: User, viewer: User
) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="runs_app_editor_insert"):
        await query_as(
            api_login_pool,
            "trust_create_run",
            as_user=viewer.id,
            portal_id=PORTAL,
            owner_id=viewer.id,
        )
    # Nor add a job to an editor's run, nor stop it.
    run = await factory.run(PORTAL, owner=alice.id, kind=JobKind.FETCH)
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="owners and editors"):
        await query_as(
            api_login_pool,
            "trust_enqueue",
            as_user=viewer.id,
            run_id=run.id,
            content_type="site_page",
            schedule_id=None,
        )
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="owners and editors"):
        await query_as(api_login_pool, "roles_stop_run", as_user=viewer.id, run_id=run.id)
    assert await _runs(factory) == 1
    assert await query(factory.pool, "check_jobs_of_run", run_id=run.id) == []
    # The same session of an editor may.
    editor = await new_user(factory, "editor")
    await factory.member(PORTAL, editor.id, "editor")
    made = await query_as(
        api_login_pool, "trust_create_run", as_user=editor.id, portal_id=PORTAL, owner_id=None
    )
    assert made and await _runs(factory) == 2
