"""The fake's updates: sparse PATCH by id and batch update, as HubSpot's specs describe them."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from smuves_sync.testing.fake_hubspot import Churn, FakeHubSpot, ServerConfig
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import validate, validate_request
from tests.integration.fake_hubspot.writes_support import (
    PAGES_DATED,
    PAGES_V3,
    PORTAL,
    POSTS,
    POSTS_V3,
    SITE,
    archived_id,
    live_ids,
)


@pytest.mark.parametrize(
    ("spec", "base"), [(PAGES_V3, SITE), (PAGES_DATED, "/cms/pages/2026-03/site-pages")]
)
async def test_a_patch_changes_only_the_keys_sent_and_moves_updated(
    spec: str, base: str, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    body = {"htmlTitle": "A new title", "widgets": {"hero": {"body": {"html": "<p>x</p>"}}}}
    validate_request(spec, base + "/{objectId}", body, "patch")
    async with client(serve(fake)) as http:
        before = (await http.get(f"{base}/{page_id}")).json()
        response = await http.patch(f"{base}/{page_id}", json=body)
        assert response.status_code == 200, response.text
        validate(spec, base + "/{objectId}", 200, response.json(), "patch")
        after = (await http.get(f"{base}/{page_id}")).json()
    assert after == response.json()
    assert after["htmlTitle"] == "A new title"
    # A nested object is replaced whole: the old main_body widget is gone.
    assert after["widgets"] == body["widgets"]
    assert after["updated"] > before["updated"]
    unchanged = set(before) - {"htmlTitle", "widgets", "updated"}
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}
    truth = {t.hubspot_id: t for t in fake.ground_truth(PORTAL, "site_page", with_data=True)}
    assert truth[page_id].data == after


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "https://elsewhere.example.com/x"}, "url"),
        ({"updated": "2030-01-01T00:00:00Z"}, "updated"),
        ({"translations": {}}, "translations"),
        ({"currentState": "PUBLISHED"}, "currentState"),
        ({"noSuchField": 1}, "noSuchField"),
        ({"htmlTitle": 42}, "htmlTitle"),
        ({"id": "1"}, "id"),
    ],
)
async def test_a_patch_of_a_read_only_unknown_or_mistyped_field_is_refused_whole(
    body: dict[str, object], field: str, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    async with client(serve(fake)) as http:
        before = (await http.get(f"{SITE}/{page_id}")).json()
        response = await http.patch(f"{SITE}/{page_id}", json={"name": "Renamed", **body})
        after = (await http.get(f"{SITE}/{page_id}")).json()
    assert response.status_code == 400
    validate(PAGES_V3, SITE + "/{objectId}", 400, response.json(), "patch")
    error = response.json()
    assert error["category"] == "VALIDATION_ERROR"
    assert error["errors"][0]["in"] == field
    assert after == before  # nothing of the request was applied
    assert fake.write_log(PORTAL) == []


async def test_an_archived_object_is_edited_only_with_archived_true(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    post_id = archived_id(fake, "blog_post")
    async with client(serve(fake)) as http:
        hidden = await http.patch(f"{POSTS}/{post_id}", json={"name": "x"})
        edited = await http.patch(
            f"{POSTS}/{post_id}", params={"archived": "true"}, json={"name": "Edited"}
        )
        again = await http.get(f"{POSTS}/{post_id}", params={"archived": "true"})
    assert hidden.status_code == 404
    assert edited.status_code == 200
    validate(POSTS_V3, POSTS + "/{objectId}", 200, edited.json(), "patch")
    assert again.json()["name"] == "Edited"


@pytest.mark.parametrize(
    ("content_type", "base", "field"),
    [
        ("blog_author", "/cms/v3/blogs/authors", "bio"),
        ("blog_author", "/cms/blogs/2026-03/authors", "displayName"),
        ("blog_tag", "/cms/v3/blogs/tags", "name"),
        ("blog_tag", "/cms/blogs/2026-03/tags", "slug"),
        ("url_redirect", "/cms/v3/url-redirects", "destination"),
        ("url_redirect", "/cms/url-redirects/2026-03", "destination"),
        ("landing_page", "/cms/v3/pages/landing-pages", "metaDescription"),
        ("blog_post", "/cms/blogs/2026-03/posts", "postSummary"),
    ],
)
async def test_every_type_takes_a_sparse_patch(
    content_type: str, base: str, field: str, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    (object_id,) = live_ids(fake, content_type)
    async with client(serve(fake)) as http:
        before = (await http.get(f"{base}/{object_id}")).json()
        response = await http.patch(f"{base}/{object_id}", json={field: "changed-value"})
        after = (await http.get(f"{base}/{object_id}")).json()
    assert response.status_code == 200, response.text
    assert after[field] == "changed-value"
    assert after["updated"] > before["updated"]
    assert {k: v for k, v in after.items() if k not in (field, "updated")} == {
        k: v for k, v in before.items() if k not in (field, "updated")
    }


async def test_a_batch_update_answers_207_naming_the_inputs_that_failed(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    first, second, third = live_ids(fake, "blog_post", 3)
    archived = archived_id(fake, "blog_post")
    inputs = [
        {"id": first, "htmlTitle": "First"},
        {"id": "999", "htmlTitle": "Nobody"},
        {"id": second, "tagIds": [7001]},
        {"id": archived, "htmlTitle": "Archived"},
        {"id": third, "url": "x"},
    ]
    body = {"inputs": inputs}
    validate_request(POSTS_V3, POSTS + "/batch/update", body, "post")
    async with client(serve(fake)) as http:
        response = await http.post(f"{POSTS}/batch/update", json=body)
        one = (await http.get(f"{POSTS}/{first}")).json()
        two = (await http.get(f"{POSTS}/{second}")).json()
    assert response.status_code == 207
    result = response.json()
    validate(POSTS_V3, POSTS + "/batch/update", 207, result, "post")
    assert {r["id"] for r in result["results"]} == {first, second}
    failed = {error["context"]["ids"][0]: error["category"] for error in result["errors"]}
    assert result["numErrors"] == len(failed) == 3
    assert failed["999"] == "OBJECT_NOT_FOUND"
    assert failed[archived] == "OBJECT_NOT_FOUND"
    assert failed[third] == "VALIDATION_ERROR"
    assert one["htmlTitle"] == "First"
    assert two["tagIds"] == [7001]  # an array is replaced, not merged


async def test_a_clean_batch_update_is_a_200(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "site_page", 5)
    body = {"inputs": [{"id": i, "metaDescription": f"about {i}"} for i in ids]}
    async with client(serve(fake)) as http:
        response = await http.post(f"{SITE}/batch/update", json=body)
    assert response.status_code == 200
    validate(PAGES_V3, SITE + "/batch/update", 200, response.json(), "post")
    assert [r["metaDescription"] for r in response.json()["results"]] == [f"about {i}" for i in ids]


@pytest.mark.parametrize(
    "body",
    [
        {"inputs": [{"id": str(n), "name": "x"} for n in range(101)]},
        {"inputs": [{"name": "no id"}]},
        {"inputs": "not a list"},
        {"inputs": [{"id": "1", "name": "a"}, {"id": "1", "name": "b"}]},
    ],
)
async def test_a_malformed_batch_is_refused_whole(body: dict[str, object], serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    if isinstance(body["inputs"], list) and body["inputs"]:
        body["inputs"] = [{"id": page_id, "name": "ok"}, *body["inputs"]]
    async with client(serve(fake)) as http:
        response = await http.post(f"{SITE}/batch/update", json=body)
    assert response.status_code == 400
    validate(PAGES_V3, SITE + "/batch/update", 400, response.json(), "post")
    assert fake.write_log(PORTAL) == []


async def test_writes_move_updated_by_the_fakes_clock(serve: Serve) -> None:
    skewed = FakeHubSpot([SMALL], ServerConfig(clock_skew_seconds=-3600))
    (page_id,) = live_ids(skewed, "site_page")
    async with client(serve(skewed)) as http:
        response = await http.patch(f"{SITE}/{page_id}", json={"name": "Dated"})
    updated = response.json()["updated"]
    (logged,) = skewed.write_log(PORTAL)
    assert logged["at"] == updated
    truth = {t.hubspot_id: t for t in skewed.ground_truth(PORTAL, "site_page")}
    assert truth[page_id].updated_at.isoformat(timespec="milliseconds")[:19] == updated[:19]
    # HubSpot's clock of this fake runs an hour behind the machine's.
    assert truth[page_id].updated_at.timestamp() < time.time() - 3000


async def test_another_portals_object_and_a_deleted_one_are_not_found(serve: Serve) -> None:
    other = replace(SMALL, portal_id=4343, token="other-token")
    fake = FakeHubSpot([SMALL, other])
    theirs = fake.ground_truth(4343, "site_page", archived=False)[0].hubspot_id
    ours = live_ids(fake, "site_page", 2)
    async with client(serve(fake)) as http:
        forged = await http.patch(f"{SITE}/{theirs}", json={"name": "Forged"})
        batch = await http.post(
            f"{SITE}/batch/update", json={"inputs": [{"id": theirs, "name": "Forged"}]}
        )
        fake.advance(PORTAL, Churn(changed=0.0, deleted=1.0, added=0.0, archived=0.0))
        gone = await http.patch(f"{SITE}/{ours[0]}", json={"name": "Too late"})
    assert forged.status_code == 404 and gone.status_code == 404
    assert batch.status_code == 207 and batch.json()["results"] == []
    truth = fake.ground_truth(4343, "site_page", with_data=True)
    assert all(item.data is not None and item.data["name"] != "Forged" for item in truth)


async def test_a_nul_and_a_lone_surrogate_travel_as_json_escapes(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    (post_id,) = live_ids(fake, "blog_post")
    body = '{"postBody": "<p>a\\u0000b</p>", "name": "x\\ud800y"}'
    async with client(serve(fake)) as http:
        response = await http.patch(
            f"{POSTS}/{post_id}", content=body, headers={"content-type": "application/json"}
        )
        raw = (await http.get(f"{POSTS}/{post_id}")).text
    assert response.status_code == 200
    assert "a\\u0000b" in raw and "x\\ud800y" in raw
