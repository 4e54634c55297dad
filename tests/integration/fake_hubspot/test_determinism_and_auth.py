"""Same seed, same portal; tokens map to one portal each; counters and /_fake/stats agree."""

from __future__ import annotations

import json
from dataclasses import replace

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeHubSpot, ServerConfig
from smuves_sync.testing.fake_hubspot.content import encode_json
from tests.integration.fake_hubspot.conftest import SMALL, TOKEN, Serve, client, fetch_all

CONFIG = ServerConfig(ten_second_limit=None, daily_limit=None)
LISTINGS = (
    "/cms/v3/pages/site-pages",
    "/cms/v3/pages/landing-pages?archived=true",
    "/cms/blogs/2026-03/posts?limit=7",
    "/cms/v3/hubdb/tables",
)


async def test_the_same_seed_serves_the_same_bytes(serve: Serve) -> None:
    bodies = []
    for _ in range(2):
        base_url = serve(FakeHubSpot([SMALL], CONFIG))
        async with client(base_url) as http:
            # Paging links name the server's address; everything else must be identical.
            bodies.append([(await http.get(p)).text.replace(base_url, "") for p in LISTINGS])
    assert bodies[0] == bodies[1]
    other = FakeHubSpot([replace(SMALL, seed=12)], CONFIG)
    mine = FakeHubSpot([SMALL], CONFIG)
    for content_type in ContentType:
        theirs = other.ground_truth(SMALL.portal_id, content_type, with_data=True)
        ours = mine.ground_truth(SMALL.portal_id, content_type, with_data=True)
        assert theirs != ours


def test_fast_encoding_equals_the_plain_object() -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(timestamps="both"))
    portal = fake.portal(SMALL.portal_id)
    collections = [portal.collection(t) for t in ContentType if t is not ContentType.HUBDB_ROW]
    collections.append(portal.collection(ContentType.HUBDB_ROW, 0))
    for collection in collections:
        for slot in range(collection.life.size):
            as_dict = collection.builder.as_dict(collection.life, slot)
            as_json = collection.builder.as_json(collection.life, slot)
            assert json.loads(as_json) == as_dict
            assert as_json == encode_json(as_dict)


async def test_tokens_belong_to_one_portal(serve: Serve) -> None:
    other = replace(SMALL, portal_id=777, token="pat-na1-other")
    fake = FakeHubSpot([SMALL, other], CONFIG)
    base_url = serve(fake)
    async with client(base_url) as mine, client(base_url, "pat-na1-other") as theirs:
        my_ids = {o["id"] for o in await fetch_all(mine, "/cms/v3/pages/site-pages")}
        their_ids = {o["id"] for o in await fetch_all(theirs, "/cms/v3/pages/site-pages")}
    assert my_ids and their_ids and not my_ids & their_ids
    assert fake.stats(SMALL.portal_id).requests == 1 and fake.stats(777).requests == 1


@pytest.mark.parametrize(
    "authorization", [None, "Bearer", "Bearer wrong-token", f"Basic {TOKEN}", TOKEN]
)
async def test_a_missing_or_wrong_token_gets_401(authorization: str | None, serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    headers = {"Authorization": authorization} if authorization is not None else {}
    async with httpx.AsyncClient(base_url=serve(fake), headers=headers) as http:
        response = await http.get("/cms/v3/pages/site-pages")
    assert response.status_code == 401
    assert response.json()["category"] == "INVALID_AUTHENTICATION"
    assert TOKEN not in response.text
    assert fake.unauthorized == 1 and fake.stats(SMALL.portal_id).requests == 0


async def test_revoked_and_added_tokens(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], CONFIG)
    base_url = serve(fake)
    async with client(base_url) as http, httpx.AsyncClient(base_url=base_url) as admin:
        assert (await http.get("/cms/v3/blogs/posts")).status_code == 200
        await admin.post("/_fake/tokens/revoke", json={"token": TOKEN})
        revoked = await http.get("/cms/v3/blogs/posts")
        await admin.post("/_fake/tokens", json={"portal_id": SMALL.portal_id, "token": "fresh"})
    async with client(base_url, "fresh") as refreshed:
        renewed = await refreshed.get("/cms/v3/blogs/posts")
    assert (revoked.status_code, renewed.status_code) == (401, 200)
    fake.revoke_token("fresh")
    async with client(base_url, "fresh") as refreshed:
        assert (await refreshed.get("/cms/v3/blogs/posts")).status_code == 401


async def test_counters_over_python_and_http_agree(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(ten_second_limit=3, daily_limit=None))
    base_url = serve(fake)
    async with client(base_url) as http:
        statuses = [(await http.get("/cms/v3/blogs/posts")).status_code for _ in range(5)]
        stats_body = (await http.get("/_fake/stats")).json()
    stats = fake.stats(SMALL.portal_id)
    assert statuses == [200, 200, 200, 429, 429]
    assert (stats.requests, stats.status_429, stats.limited_ten_secondly) == (5, 2, 2)
    assert stats.by_content_type == {"blog_post": 5}
    assert stats_body["portals"][str(SMALL.portal_id)] == stats.as_json()
    fake.reset_stats()
    assert fake.stats(SMALL.portal_id).requests == 0
