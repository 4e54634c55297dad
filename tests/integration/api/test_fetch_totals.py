"""Totals up front: the 202 of POST /v1/portals/{id}/fetches carries each new job's total,
counted against the fake HubSpot (a real server) before the jobs were created; when HubSpot
fails, is rate limited or slow, the 202 still comes, without totals, and the jobs count later."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from smuves_sync.api import create_app
from smuves_sync.db import Database, Pool
from smuves_sync.models import ContentType, JobKind
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    FaultKind,
    FaultRule,
    PortalSpec,
)
from smuves_sync.workers.follow import settled
from smuves_sync.workers.runner import Runner
from tests.integration.api.conftest import SECRET_KEY, User, new_user
from tests.support import Served, query
from tests.support.factories import Factory
from tests.support.sync import sync_settings

SPEC = PortalSpec(
    portal_id=9101,
    token="pat-na1-totals",
    seed=4,
    site_pages=230,
    landing_pages=20,
    blog_posts=60,
    hubdb_tables=2,
    rows_per_table=30,
    archived_share=0.1,
    blog_authors=6,
    blog_tags=12,
    url_redirects=25,
    blogs=2,
)
# A short bound for counting, so that a failing HubSpot costs the tests little time.
COUNT_TIMEOUT = 0.5


pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


@pytest.fixture
def fake(hubspot: Served[FakeHubSpot]) -> FakeHubSpot:
    return hubspot.fake


@pytest.fixture
def base_url(hubspot: Served[FakeHubSpot]) -> str:
    return hubspot.base_url


@pytest.fixture
async def counting_client(
    api_settings: Settings, api_pool: Pool, base_url: str
) -> AsyncIterator[httpx.AsyncClient]:
    """The API of `api_settings`, talking to the fake HubSpot at `base_url`."""
    settings = api_settings.model_copy(
        update={
            "hubspot_base_url": base_url,
            "count_timeout_seconds": COUNT_TIMEOUT,
            "hubspot_max_retries": 1,
        }
    )
    app = create_app(settings, pool=api_pool, events_interval=0.01)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


async def _connect(client: httpx.AsyncClient, user: User) -> None:
    body = {"id": SPEC.portal_id, "name": "Totals", "token": SPEC.token}
    response = await client.post("/v1/portals", json=body, headers=user.headers)
    assert response.status_code == 201, response.text


def _truth(fake: FakeHubSpot, content_type: str) -> int:
    return len(fake.ground_truth(SPEC.portal_id, content_type))


async def test_the_202_carries_every_types_total(
    counting_client: httpx.AsyncClient, fake: FakeHubSpot, admin_pool: Pool, factory: Factory
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(counting_client, alice)

    response = await counting_client.post(
        f"/v1/portals/{SPEC.portal_id}/fetches", headers=alice.headers
    )

    assert response.status_code == 202, response.text
    body = response.json()
    expected = {t.value: _truth(fake, t) for t in ContentType}
    assert body["totals"] == expected
    assert {j["content_type"]: j["total"] for j in body["run"]["jobs"]} == expected
    assert {j["status"] for j in body["run"]["jobs"]} == {"pending"}
    # Stored on the jobs, before any worker claimed one.
    stored = await query(admin_pool, "sync_jobs_of_portal", portal_id=SPEC.portal_id)
    assert {j["content_type"]: j["total"] for j in stored} == expected
    assert {j["attempts"] for j in stored} == {0}
    # Counting asked only for totals (limit=1), and every answer was a 200.
    stats = fake.stats(SPEC.portal_id)
    assert stats.requests > 0 and set(stats.by_status) == {200}


async def test_types_already_in_flight_are_not_counted_and_all_of_them_is_409_uncounted(
    counting_client: httpx.AsyncClient, fake: FakeHubSpot, factory: Factory
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(counting_client, alice)
    url = f"/v1/portals/{SPEC.portal_id}/fetches"
    first = await counting_client.post(
        url, json={"content_types": ["blog_tag"]}, headers=alice.headers
    )
    assert first.json()["totals"] == {"blog_tag": _truth(fake, "blog_tag")}
    before = fake.stats(SPEC.portal_id).by_content_type

    second = await counting_client.post(
        url, json={"content_types": ["blog_tag", "blog_author"]}, headers=alice.headers
    )
    again = await counting_client.post(
        url, json={"content_types": ["blog_author", "blog_tag"]}, headers=alice.headers
    )

    assert second.status_code == 202
    assert second.json()["totals"] == {"blog_author": _truth(fake, "blog_author")}
    assert again.status_code == 409 and again.json()["code"] == "ALL_DUPLICATE_JOBS"
    after = fake.stats(SPEC.portal_id).by_content_type
    # blog_tag was held by the first run: nobody counted it again, and the 409 asked nothing.
    assert after.get("blog_tag") == before.get("blog_tag")
    assert after["blog_author"] == 2  # live and archived, once


async def test_an_editor_starting_a_fetch_of_anothers_portal_gets_it_counted(
    counting_client: httpx.AsyncClient, fake: FakeHubSpot, factory: Factory
) -> None:
    owner, member = await new_user(factory, "owner"), await new_user(factory, "editor")
    await _connect(counting_client, owner)
    await factory.member(SPEC.portal_id, member.id, "editor")

    response = await counting_client.post(
        f"/v1/portals/{SPEC.portal_id}/fetches",
        json={"content_types": ["url_redirect"]},
        headers=member.headers,
    )

    assert response.status_code == 202
    assert response.json()["totals"] == {"url_redirect": _truth(fake, "url_redirect")}


FAILURES: dict[str, FaultRule] = {
    "5xx": FaultRule(FaultKind.STATUS, status=503, share=1.0),
    "429": FaultRule(FaultKind.RATE_LIMIT, share=1.0, policy="TEN_SECONDLY_ROLLING"),
    "daily-429": FaultRule(FaultKind.RATE_LIMIT, share=1.0, policy="DAILY"),
    # Answers come, but long after the counting bound.
    "timeout": FaultRule(FaultKind.SLOW, share=1.0, delay_ms=2000),
}


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
async def test_hubspot_failing_still_starts_the_fetch_and_its_jobs_count_later(
    failure: str,
    counting_client: httpx.AsyncClient,
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    admin_pool: Pool,
    db_url: str,
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(counting_client, alice)
    fake.set_faults((FAILURES[failure],))
    wanted = ["site_page", "blog_post"]

    response = await counting_client.post(
        f"/v1/portals/{SPEC.portal_id}/fetches",
        json={"content_types": wanted},
        headers=alice.headers,
    )

    assert response.status_code == 202, response.text
    body = response.json()
    assert body["totals"] == {"site_page": None, "blog_post": None}
    assert [(j["content_type"], j["total"]) for j in body["run"]["jobs"]] == [
        ("site_page", None),
        ("blog_post", None),
    ]
    # (The fake counts a request once it has answered it: the slow ones have not, yet.)
    if failure != "timeout":
        assert fake.stats(SPEC.portal_id).faults_injected > 0

    # HubSpot recovers; a worker's fetch jobs count their types themselves, as before.
    fake.set_faults(())
    await _work(worker_db, db_url, base_url, body["run"]["id"])
    jobs = await query(admin_pool, "sync_jobs_of_portal", portal_id=SPEC.portal_id)
    assert {j["content_type"]: (j["status"], j["total"], j["processed"]) for j in jobs} == {
        t: ("completed", _truth(fake, t), _truth(fake, t)) for t in wanted
    }


async def _work(worker_db: Database, db_url: str, base_url: str, run_id: int) -> None:
    # The API stored the token under its own key.
    settings = sync_settings(db_url, base_url, secret_key=SecretStr(SECRET_KEY))
    runner = Runner(
        worker_db,
        settings,
        kinds=[JobKind.FETCH],
        concurrency=2,
        until=settled(worker_db, SPEC.portal_id, run_id),
    )
    await runner.run()


async def test_after_a_fetch_types_read_incrementally_are_not_counted_unless_full(
    counting_client: httpx.AsyncClient,
    fake: FakeHubSpot,
    base_url: str,
    factory: Factory,
    worker_db: Database,
    admin_pool: Pool,
    db_url: str,
) -> None:
    alice = await new_user(factory, "alice")
    await _connect(counting_client, alice)
    url = f"/v1/portals/{SPEC.portal_id}/fetches"
    wanted = {"content_types": ["site_page", "blog_post"]}
    first = await counting_client.post(url, json=wanted, headers=alice.headers)
    await _work(worker_db, db_url, base_url, first.json()["run"]["id"])
    fake.reset_stats()

    # Both types have a completed fetch: the next reads only what changed, counting nothing.
    again = await counting_client.post(url, json=wanted, headers=alice.headers)
    assert again.status_code == 202, again.text
    assert again.json()["totals"] == {"site_page": None, "blog_post": None}
    assert fake.stats(SPEC.portal_id).requests == 0
    await _work(worker_db, db_url, base_url, again.json()["run"]["id"])
    jobs = await query(admin_pool, "sync_jobs_of_portal", portal_id=SPEC.portal_id)
    # Its total is what it read: nothing changed, so the newest objects of each pass.
    assert all(j["processed"] == j["total"] for j in jobs)
    # The run view says how each type was read and what it cost.
    run_id = again.json()["run"]["id"]
    view = (await counting_client.get(f"/v1/runs/{run_id}", headers=alice.headers)).json()
    assert {(r["content_type"], r["mode"], r["changed"], r["deleted"]) for r in view["reads"]} == {
        ("site_page", "incremental", 0, 0),
        ("blog_post", "incremental", 0, 0),
    }
    assert all(r["requests"] == 2 for r in view["reads"])  # live and archived, newest first

    full = await counting_client.post(url, json={**wanted, "full": True}, headers=alice.headers)
    assert full.status_code == 202, full.text
    assert full.json()["totals"] == {t: _truth(fake, t) for t in wanted["content_types"]}
