"""Notifications: newest first, paged, marked read once."""

from __future__ import annotations

import httpx

from tests.integration.api.conftest import User
from tests.support.factories import Factory


async def test_notifications_are_listed_newest_first_in_pages(
    client: httpx.AsyncClient, factory: Factory, alice: User, bob: User
) -> None:
    ids = [await factory.notification(alice.id) for _ in range(5)]
    await factory.notification(bob.id)
    first = await client.get("/v1/notifications?limit=3", headers=alice.headers)
    assert first.status_code == 200
    assert [n["id"] for n in first.json()["items"]] == ids[:1:-1][:3]
    assert first.json()["next"] == ids[2]
    rest = await client.get(f"/v1/notifications?limit=3&after={ids[2]}", headers=alice.headers)
    assert [n["id"] for n in rest.json()["items"]] == [ids[1], ids[0]]
    assert rest.json()["next"] is None


async def test_marking_read_keeps_the_first_time(
    client: httpx.AsyncClient, factory: Factory, alice: User
) -> None:
    run = await factory.run(await factory.portal(alice.id), owner=alice.id)
    notification = await factory.notification(alice.id, run, kind="run_completed")
    first = await client.post(f"/v1/notifications/{notification}/read", headers=alice.headers)
    assert first.status_code == 200
    assert first.json()["read_at"] is not None and first.json()["run_id"] == run.id
    second = await client.post(f"/v1/notifications/{notification}/read", headers=alice.headers)
    assert second.json()["read_at"] == first.json()["read_at"]
    listed = await client.get("/v1/notifications", headers=alice.headers)
    assert listed.json()["items"][0]["read_at"] == first.json()["read_at"]


async def test_bad_paging_and_unknown_ids(client: httpx.AsyncClient, alice: User) -> None:
    bad = await client.get("/v1/notifications?limit=-1", headers=alice.headers)
    assert bad.status_code == 422 and bad.json()["message"].startswith("limit: ")
    missing = await client.post("/v1/notifications/777/read", headers=alice.headers)
    assert missing.status_code == 404
