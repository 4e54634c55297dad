"""Every write endpoint of the fake, in both API versions, is one the specs declare; it takes
the specs' request bodies and answers in the specs' shapes."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.testing.fake_hubspot import FakeHubSpot
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import load_spec, validate, validate_request
from tests.integration.fake_hubspot.writes_support import live_ids, table_rows

SPECS = {
    "v3": {
        "pages": ("Pages_rollout59888_v3_pages.json", "/cms/v3/pages"),
        "posts": ("Posts_rollout635_v3_posts.json", "/cms/v3/blogs/posts"),
        "authors": ("Authors_rollout635_v3_authors.json", "/cms/v3/blogs/authors"),
        "tags": ("Tags_rollout635_v3_tags.json", "/cms/v3/blogs/tags"),
        "redirects": ("UrlRedirects_rollout149916_v3_urlRedirects.json", "/cms/v3/url-redirects"),
        "hubdb": ("Hubdb_rollout243927_v3_hubdb.json", "/cms/v3/hubdb/tables"),
    },
    "2026-03": {
        "pages": ("Pages_rollout59888_2026-03_pages.json", "/cms/pages/2026-03"),
        "posts": ("Posts_rollout635_2026-03_posts.json", "/cms/blogs/2026-03/posts"),
        "authors": ("Authors_rollout635_2026-03_authors.json", "/cms/blogs/2026-03/authors"),
        "tags": ("Tags_rollout635_2026-03_tags.json", "/cms/blogs/2026-03/tags"),
        "redirects": (
            "UrlRedirects_rollout149916_2026-03_urlRedirects.json",
            "/cms/url-redirects/2026-03",
        ),
        "hubdb": ("Hubdb_rollout243927_2026-03_hubdb.json", "/cms/hubdb/2026-03/tables"),
    },
}

# (api, template suffix, method, body or None, the status the fake answers)
Step = tuple[str, str, str, Any, int]


def _steps(fake: FakeHubSpot) -> list[Step]:
    page, post = live_ids(fake, "site_page")[0], live_ids(fake, "blog_post")[0]
    author, tag = live_ids(fake, "blog_author")[0], live_ids(fake, "blog_tag")[0]
    redirect = live_ids(fake, "url_redirect")[0]
    table, (row, other) = table_rows(fake, 2)
    return [
        ("pages", f"/site-pages/{page}", "patch", {"htmlTitle": "T"}, 200),
        (
            "pages",
            f"/landing-pages/{live_ids(fake, 'landing_page')[0]}",
            "patch",
            {"metaDescription": "M"},
            200,
        ),
        (
            "pages",
            "/site-pages/batch/update",
            "post",
            {"inputs": [{"id": page, "name": "N"}]},
            200,
        ),
        (
            "pages",
            "/site-pages/batch/update",
            "post",
            {"inputs": [{"id": page, "name": "N"}, {"id": "1", "name": "x"}]},
            207,
        ),
        ("pages", f"/site-pages/{page}/draft", "patch", {"name": "D"}, 200),
        ("pages", f"/site-pages/{page}/draft", "get", None, 200),
        ("pages", f"/site-pages/{page}/draft/push-live", "post", None, 204),
        ("pages", f"/site-pages/{page}/draft/reset", "post", None, 204),
        ("pages", f"/site-pages/{page}/revisions", "get", None, 200),
        ("pages", f"/site-pages/{page}", "patch", {"url": "x"}, 400),
        ("posts", f"/{post}", "patch", {"tagIds": [7001, 7002]}, 200),
        ("posts", "/batch/update", "post", {"inputs": [{"id": post, "postSummary": "S"}]}, 200),
        ("posts", f"/{post}/draft", "patch", {"postBody": "<p>B</p>"}, 200),
        ("posts", f"/{post}/draft/push-live", "post", None, 204),
        ("posts", f"/{post}/revisions", "get", None, 200),
        ("authors", f"/{author}", "patch", {"bio": "B"}, 200),
        ("authors", "/batch/update", "post", {"inputs": [{"id": author, "website": "w"}]}, 200),
        ("tags", f"/{tag}", "patch", {"name": "N"}, 200),
        (
            "tags",
            "/batch/update",
            "post",
            {"inputs": [{"id": tag, "slug": "s"}, {"id": "2", "slug": "x"}]},
            207,
        ),
        ("redirects", f"/{redirect}", "patch", {"destination": "https://x.example.com/"}, 200),
        ("hubdb", f"/{table}/rows/{row}/draft", "patch", {"values": {"title": "V"}}, 200),
        ("hubdb", f"/{table}/rows/{row}/draft", "get", None, 200),
        (
            "hubdb",
            f"/{table}/rows/draft/batch/update",
            "post",
            {"inputs": [{"id": other, "values": {"title": "W"}}]},
            200,
        ),
        ("hubdb", f"/{table}/rows/draft/batch/read", "post", {"inputs": [row, other]}, 200),
        ("hubdb", f"/{table}/rows/draft", "get", None, 200),
        ("hubdb", f"/{table}/draft", "get", None, 200),
        ("hubdb", f"/{table}/draft/publish", "post", None, 200),
        ("hubdb", f"/{table}/draft/reset", "post", None, 200),
    ]


def _template(spec: dict[str, Any], prefix: str, path: str, method: str) -> str:
    """The spec's path template a concrete path matches (for `method`)."""
    parts = path.split("/")
    for template, operations in spec["paths"].items():
        if not template.startswith(prefix) or method not in operations:
            continue
        pattern = template.split("/")
        if len(pattern) == len(parts) and all(
            p == c or (p.startswith("{") and p.endswith("}"))
            for p, c in zip(pattern, parts, strict=True)
        ):
            return str(template)
    raise AssertionError(f"no {method.upper()} {path} in the spec")


@pytest.mark.parametrize("version", SPECS)
async def test_every_write_endpoint_matches_the_spec(version: str, serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    checked = 0
    async with client(serve(fake)) as http:
        for api, suffix, method, body, status in _steps(fake):
            spec_name, base = SPECS[version][api]
            template = _template(load_spec(spec_name), base, base + suffix, method)
            if body is not None:
                validate_request(spec_name, template, body, method)
            response = await http.request(method.upper(), base + suffix, json=body)
            assert response.status_code == status, (template, response.text)
            if status != 204:
                validate(spec_name, template, status, response.json(), method)
            checked += 1
    assert checked == 28
