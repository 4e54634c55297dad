"""A portal whose token HubSpot refuses (401): one request, then nothing more is asked of
HubSpot for it; the start or the run fails with "reconnect the portal", the portal shows
`needs_reconnect`, later starts are refused up front (422 PORTAL_NEEDS_RECONNECT), and
reconnecting it with a new token clears it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from smuves_sync.api import create_app
from smuves_sync.db import Database, Pool
from smuves_sync.models import JobKind
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.integration.api.conftest import SECRET_KEY, User, new_user
from tests.support import Served, query
from tests.support.factories import Factory
from tests.support.sync import sync_settings

SPEC = PortalSpec(portal_id=9151, token="pat-na1-refused", seed=5, site_pages=120, blog_posts=30)
NEW_TOKEN = "pat-na1-reconnected"

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


@pytest.fixture
def fake(hubspot: Served[FakeHubSpot]) -> FakeHubSpot:
    return hubspot.fake


@pytest.fixture
async def api(
    api_settings: Settings, api_pool: Pool, hubspot: Served[FakeHubSpot]
) -> AsyncIterator[httpx.AsyncClient]:
    """The API, counting types as fetches start, against the test's fake HubSpot."""
    settings = api_settings.model_copy(
        update={"hubspot_base_url": hubspot.base_url, "count_timeout_seconds": 5.0}
    )
    app = create_app(settings, pool=api_pool, events_interval=0.01)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def _connect(api: httpx.AsyncClient, user: User, token: str, status: int = 201) -> None:
    body = {"id": SPEC.portal_id, "name": "Refused", "token": token}
    response = await api.post("/v1/portals", json=body, headers=user.headers)
    assert response.status_code == status, response.text


async def _portal(api: httpx.AsyncClient, user: User) -> dict[str, object]:
    response = await api.get("/v1/portals", headers=user.headers)
    assert response.status_code == 200, response.text
    [portal] = response.json()["items"]
    assert isinstance(portal, dict)
    return portal


async def _refused_start(api: httpx.AsyncClient, user: User) -> None:
    response = await api.post(f"/v1/portals/{SPEC.portal_id}/fetches", headers=user.headers)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "PORTAL_NEEDS_RECONNECT"
    assert "Reconnect the portal" in body["message"] and SPEC.token not in body["message"]


async def test_a_start_with_a_refused_token_asks_once_and_stays_refused_until_reconnected(
    api: httpx.AsyncClient, fake: FakeHubSpot, factory: Factory, admin_pool: Pool
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(api, alice, SPEC.token)
    assert (await _portal(api, alice))["needs_reconnect"] is False
    fake.revoke_token(SPEC.token)

    await _refused_start(api, alice)

    # The first count went alone and was refused: the only request, and no run was made.
    assert fake.unauthorized == 1
    assert await query(admin_pool, "token_runs_of_portal", portal_id=SPEC.portal_id) == []
    portal = await _portal(api, alice)
    assert portal["needs_reconnect"] is True and portal["token_rejected_at"] is not None

    # Refused up front now: HubSpot is not asked again.
    await _refused_start(api, alice)
    assert fake.unauthorized == 1

    fake.add_token(SPEC.portal_id, NEW_TOKEN)
    await _connect(api, alice, NEW_TOKEN, status=200)
    portal = await _portal(api, alice)
    assert portal["needs_reconnect"] is False and portal["token_rejected_at"] is None
    started = await api.post(f"/v1/portals/{SPEC.portal_id}/fetches", headers=alice.headers)
    assert started.status_code == 202, started.text


async def test_a_run_whose_token_is_refused_fails_at_once_after_one_request(
    api: httpx.AsyncClient,
    fake: FakeHubSpot,
    hubspot: Served[FakeHubSpot],
    factory: Factory,
    worker_db: Database,
    admin_pool: Pool,
    db_url: str,
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(api, alice, SPEC.token)
    started = await api.post(f"/v1/portals/{SPEC.portal_id}/fetches", headers=alice.headers)
    assert started.status_code == 202, started.text
    run_id = started.json()["run"]["id"]
    fake.revoke_token(SPEC.token)  # revoked after the start, before any job ran
    fake.reset_stats()

    # One job at a time (concurrency 1): exactly one request reaches HubSpot. With N slots,
    # at most one for each job claimed before the first 401 came back.
    settings = sync_settings(db_url, hubspot.base_url, secret_key=SecretStr(SECRET_KEY))
    until = settled(worker_db, SPEC.portal_id, run_id)
    await Runner(worker_db, settings, kinds=[JobKind.FETCH], concurrency=1, until=until).run()

    assert fake.unauthorized == 1 and fake.stats(SPEC.portal_id).requests == 0
    jobs = await query(admin_pool, "sync_jobs_of_portal", portal_id=SPEC.portal_id)
    assert {j["status"] for j in jobs} == {"failed"}
    assert all("reconnect the portal" in j["last_error"] for j in jobs)
    run = await api.get(f"/v1/runs/{run_id}", headers=alice.headers)
    assert run.json()["status"] == "failed"
    assert {"Reconnect the portal" in (j["last_error"] or "") for j in run.json()["jobs"]} == {True}
    assert (await _portal(api, alice))["needs_reconnect"] is True

    await _refused_start(api, alice)
    assert fake.unauthorized == 1

    fake.add_token(SPEC.portal_id, NEW_TOKEN)
    await _connect(api, alice, NEW_TOKEN, status=200)
    assert (await _portal(api, alice))["needs_reconnect"] is False
