"""Blog authors, blog tags, URL redirects and blogs: counted and listed, live then archived,
in both API versions, from bodies in HubSpot's shapes (fixtures/hubspot)."""

from __future__ import annotations

from typing import Literal

import pytest
import respx

from smuves_sync.errors import ContentTypeUnavailable
from smuves_sync.settings import Settings
from tests.unit.hubspot.conftest import BASE_URL, MakeClient, json_response
from tests.unit.hubspot.fixtures import load
from tests.unit.hubspot.test_client_listing import collect, listing

# type -> (fixture, v3 path, 2026-03 path)
TYPES = {
    "blog_author": ("blog_authors", "/cms/v3/blogs/authors", "/cms/blogs/2026-03/authors"),
    "blog_tag": ("blog_tags", "/cms/v3/blogs/tags", "/cms/blogs/2026-03/tags"),
    "url_redirect": ("url_redirects", "/cms/v3/url-redirects", "/cms/url-redirects/2026-03"),
    # HubSpot specifies no dated blog-settings API: the v3 listing serves both versions.
    "blog": ("blogs", "/cms/v3/blog-settings/settings", "/cms/v3/blog-settings/settings"),
}
Version = Literal["v3", "2026-03"]
VERSIONS: tuple[Version, ...] = ("v3", "2026-03")
CASES = [(word, version) for word in TYPES for version in VERSIONS]


def _route(router: respx.MockRouter, word: str, version: str) -> respx.Route:
    fixture, v3, dated = TYPES[word]
    live, archived = load(fixture), load(f"{fixture}_archived")
    return router.get(v3 if version == "v3" else dated).mock(
        side_effect=listing({(False, None): live, (True, None): archived})
    )


def _settings(version: Version) -> Settings:
    return Settings(hubspot_base_url=BASE_URL, hubspot_api_version=version)


@pytest.mark.parametrize(("word", "version"), CASES)
async def test_live_then_archived_objects_are_listed(
    router: respx.MockRouter, make_client: MakeClient, word: str, version: Version
) -> None:
    route = _route(router, word, version)
    fixture = TYPES[word][0]
    pages = await collect(make_client(settings=_settings(version)), word)

    live = [str(raw["id"]) for raw in load(fixture)["results"]]
    archived = [str(raw["id"]) for raw in load(f"{fixture}_archived")["results"]]
    listed = [(item.hubspot_id, item.archived) for page in pages for item in page.items]
    assert listed == [(i, False) for i in live] + [(i, True) for i in archived]
    assert {item.content_type for page in pages for item in page.items} == {word}
    sent = [dict(call.request.url.params) for call in route.calls]
    assert sent == [{"limit": "100"}, {"limit": "100", "archived": "true"}]


@pytest.mark.parametrize(("word", "version"), CASES)
async def test_live_and_archived_objects_are_counted(
    router: respx.MockRouter, make_client: MakeClient, word: str, version: Version
) -> None:
    _route(router, word, version)
    client = make_client(settings=_settings(version))
    fixture = TYPES[word][0]
    assert await client.count(word) == load(fixture)["total"]
    assert await client.count(word, archived=True) == load(f"{fixture}_archived")["total"]


async def test_translations_arrive_with_their_primary(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    _route(router, "blog_tag", "2026-03")
    pages = await collect(make_client(settings=_settings("2026-03")), "blog_tag")
    groups = [(i.hubspot_id, i.language, i.translated_from_id) for p in pages for i in p.items]
    assert groups == [
        ("11", "de", None),
        ("12", "de", None),
        ("13", "en", "11"),
        ("14", "de", None),
    ]


async def test_a_forbidden_blog_type_is_reported_unavailable(
    router: respx.MockRouter, make_client: MakeClient
) -> None:
    router.get("/cms/v3/url-redirects").mock(return_value=json_response(load("error_403"), 403))
    with pytest.raises(ContentTypeUnavailable) as raised:
        await collect(make_client(), "url_redirect")
    assert raised.value.content_type == "url_redirect"
