"""Starting fetches: 202 with the run, its jobs and the skipped types; 409 when all are in
flight; 422 for unknown types; race-free under 50 concurrent requests."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from smuves_sync.db import Pool
from smuves_sync.models import ContentType
from tests.integration.api.conftest import User
from tests.support import query
from tests.support.factories import Factory

ALL = [t.value for t in ContentType]


async def test_a_fetch_of_every_type_is_202_with_its_jobs(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=51)
    response = await client.post("/v1/portals/51/fetches", headers=alice.headers)
    assert response.status_code == 202
    body = response.json()
    run = body["run"]
    assert run["portal_id"] == 51 and run["kind"] == "fetch" and run["status"] == "pending"
    assert run["content_types"] == ALL
    assert [j["content_type"] for j in run["jobs"]] == ALL
    assert {j["status"] for j in run["jobs"]} == {"pending"}
    assert body["skipped"] == []
    # The run is the caller's.
    got = await client.get(f"/v1/runs/{run['id']}", headers=alice.headers)
    assert got.status_code == 200 and got.json() == run


async def test_types_in_flight_are_skipped_and_all_in_flight_is_409(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=52)

    async def fetch(*types: str) -> httpx.Response:
        body = {"content_types": list(types)}
        return await client.post("/v1/portals/52/fetches", json=body, headers=alice.headers)

    first = await fetch("blog_post")
    assert first.status_code == 202
    first_run = first.json()["run"]["id"]

    second = await fetch("site_page", "blog_post")
    assert second.status_code == 202
    assert [j["content_type"] for j in second.json()["run"]["jobs"]] == ["site_page"]
    assert second.json()["skipped"] == [{"content_type": "blog_post", "run_id": first_run}]
    second_run = second.json()["run"]["id"]

    third = await fetch("blog_post", "site_page")
    assert third.status_code == 409
    body = third.json()
    assert body["code"] == "ALL_DUPLICATE_JOBS"
    assert body["run_ids"] == sorted([first_run, second_run])
    assert str(first_run) in body["message"] and str(second_run) in body["message"]


async def test_a_null_body_fetches_every_type(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=53)
    response = await client.post(
        "/v1/portals/53/fetches", json={"content_types": None}, headers=alice.headers
    )
    assert response.status_code == 202
    assert len(response.json()["run"]["jobs"]) == len(ALL)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content_types": ["blog_post", "web_page"]}, "content_types[1]"),
        ({"content_types": []}, "content_types"),
        ({"content_types": "blog_post"}, "content_types"),
        ({"types": ["blog_post"]}, "types"),
    ],
    ids=["unknown-type", "empty", "not-a-list", "misspelt-field"],
)
async def test_a_bad_fetch_body_is_422_naming_the_field(
    client: httpx.AsyncClient,
    factory: Factory,
    admin_pool: Pool,
    alice: User,
    body: dict[str, object],
    field: str,
) -> None:
    await factory.portal(alice.id, portal_id=54)
    response = await client.post("/v1/portals/54/fetches", json=body, headers=alice.headers)
    assert response.status_code == 422
    assert response.json()["code"] == "INVALID_INPUT"
    assert response.json()["message"].startswith(f"{field}: ")
    assert await query(admin_pool, "check_runs_of_portal", portal_id=54) == [{"runs": 0}]


async def test_a_fetch_of_an_unknown_portal_is_404(client: httpx.AsyncClient, alice: User) -> None:
    response = await client.post("/v1/portals/999/fetches", headers=alice.headers)
    assert response.status_code == 404
    assert response.json() == {"code": "NOT_FOUND", "message": "portal 999 not found"}


async def test_fifty_concurrent_fetches_make_one_run(
    client: httpx.AsyncClient, factory: Factory, admin_pool: Pool, alice: User
) -> None:
    await factory.portal(alice.id, portal_id=55)
    # All 50 requests are in flight before any is answered: the app's pool (10) makes most
    # of them queue, and each transaction waits on the first one's in-flight jobs.
    responses = await asyncio.gather(
        *(client.post("/v1/portals/55/fetches", headers=alice.headers) for _ in range(50))
    )
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {202: 1, 409: 49}
    [winner] = [r.json() for r in responses if r.status_code == 202]
    for refused in (r.json() for r in responses if r.status_code == 409):
        assert refused["code"] == "ALL_DUPLICATE_JOBS"
        assert refused["run_ids"] == [winner["run"]["id"]]
    assert await query(admin_pool, "check_runs_of_portal", portal_id=55) == [{"runs": 1}]
