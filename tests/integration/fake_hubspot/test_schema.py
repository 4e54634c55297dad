"""Every endpoint of the fake, in both API versions, answers in the official specs' shapes."""

from __future__ import annotations

import pytest
from jsonschema import ValidationError

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeClock,
    FakeHubSpot,
    FaultKind,
    FaultRule,
    ServerConfig,
)
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import validate

VERSIONS = {
    "v3": {
        "pages": ("Pages_rollout59888_v3_pages.json", "/cms/v3/pages"),
        "posts": ("Posts_rollout635_v3_posts.json", "/cms/v3/blogs/posts"),
        "hubdb": ("Hubdb_rollout243927_v3_hubdb.json", "/cms/v3/hubdb/tables"),
    },
    "2026-03": {
        "pages": ("Pages_rollout59888_2026-03_pages.json", "/cms/pages/2026-03"),
        "posts": ("Posts_rollout635_2026-03_posts.json", "/cms/blogs/2026-03/posts"),
        "hubdb": ("Hubdb_rollout243927_2026-03_hubdb.json", "/cms/hubdb/2026-03/tables"),
    },
}


def _is_archived(obj: dict[str, object]) -> bool:
    marker = obj.get("archivedAt", obj.get("deletedAt"))
    return marker not in (0, "1970-01-01T00:00:00Z")


@pytest.mark.parametrize("version", VERSIONS)
async def test_listings_and_objects_match_the_spec(version: str, serve: Serve) -> None:
    pages_spec, pages = VERSIONS[version]["pages"]
    posts_spec, posts = VERSIONS[version]["posts"]
    hubdb_spec, tables = VERSIONS[version]["hubdb"]
    fake = FakeHubSpot([SMALL], ServerConfig(timestamps="both"))
    checked = 0
    async with client(serve(fake)) as http:
        listings = [
            (pages_spec, pages + "/site-pages"),
            (pages_spec, pages + "/landing-pages"),
            (posts_spec, posts),
            (hubdb_spec, tables),
        ]
        for spec, path in listings:
            for archived in (False, True):
                response = await http.get(path, params={"archived": str(archived).lower()})
                assert response.status_code == 200
                body = response.json()
                validate(spec, path, 200, body)
                assert body["results"], f"{path} archived={archived} served nothing to check"
                assert all(_is_archived(obj) is archived for obj in body["results"])
                first_id = body["results"][0]["id"]
                one = await http.get(f"{path}/{first_id}", params={"archived": archived})
                template = path + ("/{tableIdOrName}" if spec == hubdb_spec else "/{objectId}")
                validate(spec, template, 200, one.json())
                checked += 2

        table_id = fake.ground_truth(SMALL.portal_id, "hubdb_table", archived=False)[0].hubspot_id
        rows = f"{tables}/{table_id}/rows"
        rows_template = tables + "/{tableIdOrName}/rows"
        for params in ({"limit": 7}, {"limit": 7, "offset": 7}, {"archived": "true"}):
            body = (await http.get(rows, params=params)).json()
            validate(hubdb_spec, rows_template, 200, body)
            assert body["results"]
            assert body["type"] == ("RANDOM_ACCESS" if "offset" in params else "STREAMING")
            row = await http.get(f"{rows}/{body['results'][0]['id']}", params=params)
            validate(hubdb_spec, rows_template + "/{rowId}", 200, row.json())
            checked += 2
    assert checked == 22


# The blog's other objects and the redirects: (spec, listing path, object path template).
BLOG_TYPES: dict[str, dict[str, tuple[str, str, str]]] = {
    "v3": {
        "blog_author": (
            "Authors_rollout635_v3_authors.json",
            "/cms/v3/blogs/authors",
            "/cms/v3/blogs/authors/{objectId}",
        ),
        "blog_tag": (
            "Tags_rollout635_v3_tags.json",
            "/cms/v3/blogs/tags",
            "/cms/v3/blogs/tags/{objectId}",
        ),
        "url_redirect": (
            "UrlRedirects_rollout149916_v3_urlRedirects.json",
            "/cms/url-redirects/v3",
            "/cms/v3/url-redirects/{urlRedirectId}",
        ),
        "blog": (
            "BlogSettings_rollout635_v3_blogSettings.json",
            "/cms/v3/blog-settings/settings",
            "/cms/v3/blog-settings/settings/{blogId}",
        ),
    },
    "2026-03": {
        "blog_author": (
            "Authors_rollout635_2026-03_authors.json",
            "/cms/blogs/2026-03/authors",
            "/cms/blogs/2026-03/authors/{objectId}",
        ),
        "blog_tag": (
            "Tags_rollout635_2026-03_tags.json",
            "/cms/blogs/2026-03/tags",
            "/cms/blogs/2026-03/tags/{objectId}",
        ),
        "url_redirect": (
            "UrlRedirects_rollout149916_2026-03_urlRedirects.json",
            "/cms/url-redirects/2026-03",
            "/cms/url-redirects/2026-03/{urlRedirectId}",
        ),
    },
}
# Where the v3 guide lists redirects; the v3 spec's listing path is /cms/url-redirects/v3.
GUIDE_REDIRECTS = "/cms/v3/url-redirects"


@pytest.mark.parametrize("version", BLOG_TYPES)
async def test_blog_types_and_redirects_match_the_spec(version: str, serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(timestamps="both"))
    checked = []
    async with client(serve(fake)) as http:
        for word, (spec, path, template) in BLOG_TYPES[version].items():
            for archived in (False, True):
                response = await http.get(path, params={"archived": str(archived).lower()})
                assert response.status_code == 200
                body = response.json()
                validate(spec, path, 200, body)
                truth = fake.ground_truth(SMALL.portal_id, word, archived=archived)
                assert [o["id"] for o in body["results"]] == [t.hubspot_id for t in truth]
                assert body["results"], f"{path} archived={archived} served nothing to check"
                if word != "url_redirect":  # a redirect carries no archive marker
                    assert all(_is_archived(obj) is archived for obj in body["results"])
                first_id = body["results"][0]["id"]
                one = await http.get(
                    template.split("{")[0] + first_id, params={"archived": archived}
                )
                assert one.status_code == 200
                validate(spec, template, 200, one.json())
                checked.append((word, archived))
        if version == "v3":
            guide = await http.get(GUIDE_REDIRECTS, params={"limit": 5})
            spec, path, _ = BLOG_TYPES["v3"]["url_redirect"]
            validate(spec, path, 200, guide.json())
            same = (await http.get(path, params={"limit": 5})).json()
            assert guide.json()["results"] == same["results"]
    assert len(checked) == 2 * len(BLOG_TYPES[version])


async def test_authors_tags_and_blogs_come_in_language_groups() -> None:
    fake = FakeHubSpot([SMALL])
    for word in ("blog_author", "blog_tag", "blog"):
        objects = [t.data for t in fake.ground_truth(SMALL.portal_id, word, with_data=True)]
        assert all(o is not None for o in objects)
        by_id = {str(o["id"]): o for o in objects if o is not None}
        translations = [o for o in by_id.values() if o["translatedFromId"] not in (0, "")]
        assert translations, f"{word}: no translations to check"
        for translation in translations:
            primary = by_id.get(str(translation["translatedFromId"]))
            if primary is None:
                continue  # the primary was archived or deleted: the reference stays
            assert primary["translatedFromId"] in (0, "")
            assert (primary["language"], translation["language"] != "en") == ("en", True)
        languages: dict[str, list[str]] = {}
        for o in translations:
            languages.setdefault(str(o["translatedFromId"]), []).append(o["language"])
        assert all(len(set(found)) == len(found) for found in languages.values())


@pytest.mark.parametrize("version", VERSIONS)
async def test_error_bodies_match_the_spec(version: str, serve: Serve) -> None:
    pages_spec, pages = VERSIONS[version]["pages"]
    hubdb_spec, tables = VERSIONS[version]["hubdb"]
    site = pages + "/site-pages"
    clock = FakeClock()
    faults = (
        FaultRule(
            FaultKind.STATUS, status=500, on_requests=(1,), content_type=ContentType.BLOG_POST
        ),
        FaultRule(
            FaultKind.STATUS, status=403, on_requests=(2,), content_type=ContentType.BLOG_POST
        ),
    )
    config = ServerConfig(ten_second_limit=6, daily_limit=None, faults=faults)
    fake = FakeHubSpot([SMALL], config, clock=clock)
    base_url = serve(fake)
    posts_spec, posts = VERSIONS[version]["posts"]
    async with client(base_url, token="not-a-token") as stranger:
        response = await stranger.get(site)
        assert response.status_code == 401
        validate(pages_spec, site, 401, response.json())
    async with client(base_url) as http:
        answers = [
            (pages_spec, site + "/{objectId}", await http.get(f"{site}/12345")),
            (pages_spec, site, await http.get(site, params={"limit": "many"})),
            (hubdb_spec, tables + "/{tableIdOrName}/rows", await http.get(f"{tables}/nope/rows")),
            (posts_spec, posts, await http.get(posts)),
            (posts_spec, posts, await http.get(posts)),
        ]
        assert [r.status_code for _, _, r in answers] == [404, 400, 404, 500, 403]
        answers.append((pages_spec, site, await http.get(site)))  # the 6th request of 6 allowed
        refused = await http.get(site)
        assert refused.status_code == 429
        answers.append((pages_spec, site, refused))
    for spec, template, response in answers:
        body = response.json()
        if response.status_code != 200:
            validate(spec, template, response.status_code, body)
            assert body["status"] == "error" and body["category"]
    assert refused.json()["policyName"] == "TEN_SECONDLY_ROLLING"
    assert refused.json()["errorType"] == "RATE_LIMIT"


async def test_daily_limit_body_matches_the_spec(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL], ServerConfig(ten_second_limit=None, daily_limit=1))
    pages_spec, pages = VERSIONS["v3"]["pages"]
    async with client(serve(fake)) as http:
        assert (await http.get(pages + "/site-pages")).status_code == 200
        refused = await http.get(pages + "/site-pages")
    assert refused.status_code == 429
    validate(pages_spec, pages + "/site-pages", 429, refused.json())
    assert refused.json()["policyName"] == "DAILY"


def test_the_validation_rejects_what_the_spec_forbids() -> None:
    fake = FakeHubSpot([SMALL])
    page = fake.ground_truth(SMALL.portal_id, "site_page", with_data=True)[0].data
    assert page is not None
    spec, pages = VERSIONS["v3"]["pages"]
    template = pages + "/site-pages/{objectId}"
    validate(spec, template, 200, page)
    broken_bodies = [
        {k: v for k, v in page.items() if k != "slug"},
        {**page, "language": "klingon"},
        {**page, "updated": "yesterday"},
        {**page, "categoryId": "4"},
    ]
    for broken in broken_bodies:
        with pytest.raises(ValidationError):
            validate(spec, template, 200, broken)
