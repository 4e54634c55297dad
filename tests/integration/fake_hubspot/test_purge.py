"""Purges: objects gone from both listings (emptied from HubSpot's recycle bin, a HubDB row
deleted), and the counts a client finds them by: `limit=1` with `createdAfter`/`createdBefore`
(a table's rows take neither: the tables listing's `rowCount` says which table lost rows)."""

from __future__ import annotations

import httpx

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, FakeHubSpot, PortalSpec, ServerConfig
from tests.integration.fake_hubspot.conftest import TOKEN, Serve, client, fetch_all

POSTS = "/cms/v3/blogs/posts"
PORTAL = PortalSpec(
    portal_id=4646,
    token=TOKEN,
    seed=9,
    blog_posts=120,
    hubdb_tables=1,
    rows_per_table=30,
    archived_share=0.1,
)


def truth_ids(fake: FakeHubSpot, content_type: str, archived: bool | None = None) -> list[str]:
    truth = fake.ground_truth(PORTAL.portal_id, content_type, archived=archived)
    return [item.hubspot_id for item in truth]


async def count(http: httpx.AsyncClient, path: str, **params: str) -> int:
    response = await http.get(path, params={"limit": "1", **params})
    assert response.status_code == 200, response.text
    return int(response.json()["total"])


async def test_a_purged_object_leaves_both_listings(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig())
    live, binned = truth_ids(fake, "blog_post", False), truth_ids(fake, "blog_post", True)
    assert fake.purge(PORTAL.portal_id, "blog_post", [live[5], binned[0], "999"]) == 2
    async with client(serve(fake)) as http:
        served_live = [str(p["id"]) for p in await fetch_all(http, POSTS)]
        served_binned = [str(p["id"]) for p in await fetch_all(http, POSTS, archived=True)]
        gone = await http.get(f"{POSTS}/{live[5]}", params={"archived": "true"})
    assert served_live == live[:5] + live[6:]
    assert served_binned == binned[1:]
    assert gone.status_code == 404


async def test_counts_honour_the_creation_window(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig(timestamps="both"))
    async with client(serve(fake)) as http:
        posts = await fetch_all(http, POSTS)
        created = sorted(str(p["createdAt"]) for p in posts)
        lo, hi = created[10], created[40]
        inside = await count(http, POSTS, createdAfter=lo, createdBefore=hi)
        after = await count(http, POSTS, createdAfter=lo)
        fake.purge(PORTAL.portal_id, "blog_post", [str(posts[20]["id"])])
        purged = await count(http, POSTS, createdAfter=lo, createdBefore=hi)
    assert inside == 29  # both bounds exclusive
    assert after == len(posts) - 11
    assert purged == 28


async def test_a_deleted_row_shows_in_its_tables_row_count(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig())
    rows = truth_ids(fake, "hubdb_row", False)
    table = rows[0].split(":")[0]
    assert fake.purge(PORTAL.portal_id, ContentType.HUBDB_ROW, [rows[3]]) == 1
    async with client(serve(fake)) as http:
        tables = (await http.get("/cms/v3/hubdb/tables")).json()["results"]
        path = f"/cms/v3/hubdb/tables/{table}/rows"
        # Rows take no createdAfter: HubSpot ignores it, and so does the fake.
        ignored = await count(http, path, createdAfter="2100-01-01T00:00:00Z")
    assert [t["rowCount"] for t in tables if t["id"] == table] == [len(rows) - 1]
    assert ignored == len(rows) - 1
    assert truth_ids(fake, "hubdb_row", False) == rows[:3] + rows[4:]


def test_a_step_purges_from_the_recycle_bin_first() -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig())
    live, binned = truth_ids(fake, "blog_post", False), truth_ids(fake, "blog_post", True)
    fake.advance(PORTAL.portal_id, Churn(changed=0, deleted=0, added=0, archived=0, purged=0.05))
    after_live = truth_ids(fake, "blog_post", False)
    after_binned = truth_ids(fake, "blog_post", True)
    assert after_live == live
    assert len(binned) - len(after_binned) == round(len(live) * 0.05)
    assert set(after_binned) < set(binned)
