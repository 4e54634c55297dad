"""Listings that shift while a client pages through them, and reads by id in batches.

HubSpot's `after` cursors are offsets: an object deleted between two page requests moves every
later one a place forward, and the one that crosses the page boundary is never served. The
fake does the same with `ServerConfig(cursors="offset")`, and a DRIFT fault deletes and
creates objects while a listing runs. The batch reads answer in the specs' shapes.
"""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    FaultKind,
    FaultRule,
    PortalSpec,
    ServerConfig,
)
from tests.integration.fake_hubspot.conftest import SMALL, TOKEN, Serve, client, fetch_all
from tests.integration.fake_hubspot.openapi import validate

POSTS = "/cms/v3/blogs/posts"
# 150 live posts, none archived: page 1 is slots 0-99, page 2 slots 100-149.
PORTAL = PortalSpec(portal_id=4343, token=TOKEN, seed=4, blog_posts=150, archived_share=0.0)


def drift(on: int, *, deleted: int = 0, created: int = 0) -> FaultRule:
    return FaultRule(
        FaultKind.DRIFT,
        on_requests=(on,),
        content_type=ContentType.BLOG_POST,
        deleted=deleted,
        created=created,
    )


def post_ids(fake: FakeHubSpot) -> list[str]:
    return [item.hubspot_id for item in fake.ground_truth(PORTAL.portal_id, "blog_post")]


async def test_a_deletion_between_two_pages_hides_the_post_at_the_boundary(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig(cursors="offset", faults=(drift(2, deleted=1),)))
    before = post_ids(fake)
    async with client(serve(fake)) as http:
        served = [str(post["id"]) for post in await fetch_all(http, POSTS)]

    after = post_ids(fake)
    assert after == before[1:]  # the first post went while the listing ran
    assert served == before[:100] + before[101:]  # it was served; the 101st never was
    assert set(after) - set(served) == {before[100]}


async def test_keyed_cursors_survive_the_same_deletion(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig(faults=(drift(2, deleted=1),)))
    before = post_ids(fake)
    async with client(serve(fake)) as http:
        served = [str(post["id"]) for post in await fetch_all(http, POSTS)]
    assert served == before


async def test_created_objects_come_last_and_newest(serve: Serve) -> None:
    fake = FakeHubSpot(
        [PORTAL], ServerConfig(cursors="offset", timestamps="both", faults=(drift(2, created=3),))
    )
    before = post_ids(fake)
    async with client(serve(fake)) as http:
        served = await fetch_all(http, POSTS)
        total = (await http.get(POSTS, params={"limit": 1})).json()["total"]

    after = post_ids(fake)
    assert after[:150] == before and len(after) == total == 153
    assert [str(post["id"]) for post in served] == after
    created = [str(post["createdAt"]) for post in served]
    assert created == sorted(created) and len(set(created)) == len(created)


async def test_paging_by_creation_time_misses_nothing_that_stayed(serve: Serve) -> None:
    fake = FakeHubSpot([PORTAL], ServerConfig(cursors="offset", timestamps="both"))
    fake.set_faults((drift(2, deleted=5, created=2),))
    before = post_ids(fake)
    served: list[dict[str, Any]] = []
    params: dict[str, str] = {"limit": "100", "sort": "createdAt"}
    async with client(serve(fake)) as http:
        while True:
            body = (await http.get(POSTS, params=params)).json()
            served.extend(body["results"])
            if "paging" not in body:
                break
            params["createdAfter"] = str(body["results"][-1]["createdAt"])

    ids = [str(post["id"]) for post in served]
    assert ids == before[:100] + post_ids(fake)[95:]
    assert set(post_ids(fake)) <= set(ids)


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("Pages_rollout59888_v3_pages.json", "/cms/v3/pages/site-pages"),
        ("Pages_rollout59888_2026-03_pages.json", "/cms/pages/2026-03/landing-pages"),
        ("Posts_rollout635_v3_posts.json", "/cms/v3/blogs/posts"),
        ("Posts_rollout635_2026-03_posts.json", "/cms/blogs/2026-03/posts"),
    ],
)
async def test_batch_reads_answer_in_the_specs_shapes(spec: str, path: str, serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(ten_second_limit=None))
    content_type = {
        "site-pages": "site_page",
        "landing-pages": "landing_page",
    }.get(path.rsplit("/", 1)[1], "blog_post")
    live = [i.hubspot_id for i in fake.ground_truth(SMALL.portal_id, content_type, archived=False)]
    archived = [
        i.hubspot_id for i in fake.ground_truth(SMALL.portal_id, content_type, archived=True)
    ]
    template = path + "/batch/read"
    async with client(serve(fake)) as http:
        whole = await http.post(template, json={"inputs": live[:3]})
        partial = await http.post(template, json={"inputs": [live[0], archived[0], "999"]})
        gone = await http.post(
            template, params={"archived": "true"}, json={"inputs": [archived[0], live[0]]}
        )
        refused = await http.post(template, json={"inputs": [1, 2]})

    assert whole.status_code == 200
    validate(spec, template, 200, whole.json(), method="post")
    assert [r["id"] for r in whole.json()["results"]] == live[:3]
    assert partial.status_code == 207
    validate(spec, template, 207, partial.json(), method="post")
    assert [r["id"] for r in partial.json()["results"]] == [live[0]]
    assert partial.json()["errors"][0]["context"]["ids"] == [archived[0], "999"]
    assert gone.status_code == 207
    assert [r["id"] for r in gone.json()["results"]] == [archived[0]]
    assert refused.status_code == 400


async def test_row_batch_reads_answer_published_rows_of_live_tables(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(ten_second_limit=None))
    rows = fake.ground_truth(SMALL.portal_id, "hubdb_row", archived=False)
    table_id, row_id = rows[0].hubspot_id.split(":")
    others = [r.hubspot_id.split(":")[1] for r in rows if r.hubspot_id.startswith(f"{table_id}:")]
    archived_table = fake.ground_truth(SMALL.portal_id, "hubdb_table", archived=True)[0]
    spec = "Hubdb_rollout243927_v3_hubdb.json"
    template = "/cms/v3/hubdb/tables/{tableIdOrName}/rows/batch/read"
    async with client(serve(fake)) as http:
        found = await http.post(
            f"/cms/v3/hubdb/tables/{table_id}/rows/batch/read", json={"inputs": others[:2]}
        )
        missing = await http.post(
            f"/cms/hubdb/2026-03/tables/{table_id}/rows/batch/read", json={"inputs": ["1"]}
        )
        no_table = await http.post(
            f"/cms/v3/hubdb/tables/{archived_table.hubspot_id}/rows/batch/read",
            json={"inputs": [row_id]},
        )

    assert found.status_code == 200
    validate(spec, template, 200, found.json(), method="post")
    assert [r["id"] for r in found.json()["results"]] == others[:2]
    assert missing.status_code == 207
    validate(spec, template, 207, missing.json(), method="post")
    assert missing.json()["results"] == []
    assert no_table.status_code == 404
