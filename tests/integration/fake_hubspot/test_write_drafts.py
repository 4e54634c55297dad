"""Pages' and posts' draft buffers, push-live, reset and revisions, as the specs describe them."""

from __future__ import annotations

import pytest

from smuves_sync.testing.fake_hubspot import Churn, FakeHubSpot
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import validate, validate_request
from tests.integration.fake_hubspot.writes_support import (
    PAGES_V3,
    PORTAL,
    POSTS,
    POSTS_V3,
    SITE,
    live_ids,
)

DRAFT = SITE + "/{objectId}/draft"


@pytest.mark.parametrize(
    ("spec", "base", "kind"), [(PAGES_V3, SITE, "site_page"), (POSTS_V3, POSTS, "blog_post")]
)
async def test_a_draft_is_seeded_from_live_and_goes_live_only_when_pushed(
    spec: str, base: str, kind: str, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    (object_id,) = live_ids(fake, kind)
    one, draft = f"{base}/{object_id}", f"{base}/{object_id}/draft"
    validate_request(spec, base + "/{objectId}/draft", {"htmlTitle": "Draft title"}, "patch")
    async with client(serve(fake)) as http:
        live = (await http.get(one)).json()
        seeded = (await http.get(draft)).json()
        validate(spec, base + "/{objectId}/draft", 200, seeded)
        patched = await http.patch(draft, json={"htmlTitle": "Draft title"})
        validate(spec, base + "/{objectId}/draft", 200, patched.json(), "patch")
        live_meanwhile = (await http.get(one)).json()
        buffer = (await http.get(draft)).json()
        pushed = await http.post(f"{draft}/push-live")
        live_after = (await http.get(one)).json()
        after_push = (await http.get(draft)).json()
    assert seeded == live
    assert patched.status_code == 200 and buffer == patched.json()
    assert buffer["htmlTitle"] == "Draft title" and buffer["updated"] > live["updated"]
    assert live_meanwhile == live  # the draft leaves live alone
    assert pushed.status_code == 204 and pushed.content == b""
    assert live_after["htmlTitle"] == "Draft title"
    assert live_after["updated"] > live["updated"]
    assert after_push == live_after  # the buffer was published: the draft equals live again


async def test_a_reset_drops_the_buffer(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    async with client(serve(fake)) as http:
        live = (await http.get(f"{SITE}/{page_id}")).json()
        await http.patch(f"{SITE}/{page_id}/draft", json={"name": "Half done"})
        reset = await http.post(f"{SITE}/{page_id}/draft/reset")
        draft = (await http.get(f"{SITE}/{page_id}/draft")).json()
        pushed = await http.post(f"{SITE}/{page_id}/draft/push-live")
        after = (await http.get(f"{SITE}/{page_id}")).json()
    assert reset.status_code == 204
    assert draft == live
    assert pushed.status_code == 204
    assert after == live  # nothing was left to push


async def test_a_live_patch_leaves_an_open_draft_stale_and_its_push_reverts_it(
    serve: Serve,
) -> None:
    """The hazard WRITES.md reasons HubSpot has: a colleague's open draft is a copy of live
    from before our edit, so publishing it later undoes our edit."""
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    async with client(serve(fake)) as http:
        original = (await http.get(f"{SITE}/{page_id}")).json()
        fake.person_edit(PORTAL, "site_page", page_id, {"footerHtml": "<p>wip</p>"}, draft=True)
        await http.patch(f"{SITE}/{page_id}", json={"metaDescription": "Ours"})
        draft = (await http.get(f"{SITE}/{page_id}/draft")).json()
        live = (await http.get(f"{SITE}/{page_id}")).json()
        await http.post(f"{SITE}/{page_id}/draft/push-live")
        published = (await http.get(f"{SITE}/{page_id}")).json()
    assert live["metaDescription"] == "Ours"
    assert draft["metaDescription"] == original["metaDescription"] != "Ours"
    assert published["footerHtml"] == "<p>wip</p>"
    assert published["metaDescription"] == original["metaDescription"]


async def test_revisions_list_each_version_with_its_user(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    (post_id,) = live_ids(fake, "blog_post")
    path = f"{POSTS}/{post_id}/revisions"
    async with client(serve(fake)) as http:
        untouched = (await http.get(path)).json()
        original = (await http.get(f"{POSTS}/{post_id}")).json()
        await http.patch(f"{POSTS}/{post_id}", json={"name": "Ours"})
        fake.person_edit(PORTAL, "blog_post", post_id, {"name": "Theirs"})
        response = await http.get(path)
        first_page = (await http.get(path, params={"limit": 2})).json()
    validate(POSTS_V3, POSTS + "/{objectId}/revisions", 200, response.json())
    body = response.json()
    assert untouched["total"] == 1 and untouched["results"][0]["object"] == original
    assert body["total"] == 3
    newest, ours, seed = body["results"]
    assert [newest["object"]["name"], ours["object"]["name"]] == ["Theirs", "Ours"]
    assert seed["object"] == original
    assert newest["user"]["fullName"] != ours["user"]["fullName"]
    assert newest["updatedAt"] > ours["updatedAt"] > seed["updatedAt"]
    assert first_page["paging"]["next"]["after"] == "2" and len(first_page["results"]) == 2


async def test_a_later_version_step_wins_over_the_keys_it_regenerates(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "site_page", 30)
    async with client(serve(fake)) as http:
        for page_id in ids:
            await http.patch(f"{SITE}/{page_id}", json={"metaDescription": "Ours", "headHtml": "h"})
        fake.advance(PORTAL, Churn(changed=1.0, deleted=0.0, added=0.0, archived=0.0))
        after = [(await http.get(f"{SITE}/{page_id}")).json() for page_id in ids]
    # The step rewrote every page's meta description; nobody's step touches headHtml.
    assert all(page["headHtml"] == "h" for page in after)
    assert all(page["metaDescription"] != "Ours" for page in after)
