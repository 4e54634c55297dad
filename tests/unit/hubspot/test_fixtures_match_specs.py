"""The fixture bodies have the shapes HubSpot's official OpenAPI documents promise."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from tests.unit.hubspot.fixtures import load, openapi_dir

# fixture -> (spec file, response schema of its list endpoint)
LISTINGS = {
    "site_pages_1": (
        "Pages_rollout59888_v3_pages.json",
        "CollectionResponseWithTotalPageForwardPaging",
    ),
    "site_pages_2": (
        "Pages_rollout59888_v3_pages.json",
        "CollectionResponseWithTotalPageForwardPaging",
    ),
    "site_pages_archived": (
        "Pages_rollout59888_v3_pages.json",
        "CollectionResponseWithTotalPageForwardPaging",
    ),
    "landing_pages": (
        "Pages_rollout59888_2026-03_pages.json",
        "CollectionResponseWithTotalPageForwardPaging",
    ),
    "blog_posts": (
        "Posts_rollout635_v3_posts.json",
        "CollectionResponseWithTotalBlogPostForwardPaging",
    ),
    "blog_posts_archived": (
        "Posts_rollout635_2026-03_posts.json",
        "CollectionResponseWithTotalBlogPostForwardPaging",
    ),
    "hubdb_tables": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "CollectionResponseWithTotalHubDbTableV3",
    ),
    "hubdb_tables_archived": (
        "Hubdb_rollout243927_2026-03_hubdb.json",
        "CollectionResponseWithTotalHubDbTableV3",
    ),
    "hubdb_rows_1001_1": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "StreamingCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "hubdb_rows_1001_2": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "StreamingCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "hubdb_rows_1001_archived": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "StreamingCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "hubdb_rows_empty": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "StreamingCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "hubdb_rows_1002_1": (
        "Hubdb_rollout243927_2026-03_hubdb.json",
        "RandomAccessCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "hubdb_rows_1002_2": (
        "Hubdb_rollout243927_v3_hubdb.json",
        "RandomAccessCollectionResponseWithTotalHubDbTableRowV3",
    ),
    "blog_authors": (
        "Authors_rollout635_2026-03_authors.json",
        "CollectionResponseWithTotalBlogAuthorForwardPaging",
    ),
    "blog_authors_archived": (
        "Authors_rollout635_v3_authors.json",
        "CollectionResponseWithTotalBlogAuthorForwardPaging",
    ),
    "blog_tags": (
        "Tags_rollout635_v3_tags.json",
        "CollectionResponseWithTotalTagForwardPaging",
    ),
    "blog_tags_archived": (
        "Tags_rollout635_2026-03_tags.json",
        "CollectionResponseWithTotalTagForwardPaging",
    ),
    "url_redirects": (
        "UrlRedirects_rollout149916_v3_urlRedirects.json",
        "CollectionResponseWithTotalUrlMappingForwardPaging",
    ),
    "url_redirects_archived": (
        "UrlRedirects_rollout149916_2026-03_urlRedirects.json",
        "CollectionResponseWithTotalUrlMappingForwardPaging",
    ),
    "blogs": (
        "BlogSettings_rollout635_v3_blogSettings.json",
        "CollectionResponseWithTotalBlog",
    ),
    "blogs_archived": (
        "BlogSettings_rollout635_v3_blogSettings.json",
        "CollectionResponseWithTotalBlog",
    ),
}
ERRORS = ["error_400", "error_401", "error_403", "error_404", "error_500"]


def _validator(spec_file: str, schema_name: str) -> jsonschema.Draft7Validator:
    spec: dict[str, Any] = json.loads((openapi_dir() / spec_file).read_text())
    components = copy.deepcopy(spec["components"])
    schemas = components["schemas"]
    if "HubDbTableRowV3" in schemas:
        # Two known quirks of the HubDB documents: the row wrapper is referenced but never
        # defined, and column values are typed as objects although the API sends plain values.
        row = copy.deepcopy(schemas["HubDbTableRowV3"])
        row["properties"]["values"] = {"type": "object"}
        schemas["HubDbTableRowV3Wrapper"] = row
    root = {"$ref": f"#/components/schemas/{schema_name}", "components": components}
    return jsonschema.Draft7Validator(root)


@pytest.mark.parametrize("fixture", sorted(LISTINGS))
def test_listing_fixture_matches_its_schema(fixture: str) -> None:
    spec_file, schema_name = LISTINGS[fixture]
    errors = list(_validator(spec_file, schema_name).iter_errors(load(fixture)))
    assert errors == []


@pytest.mark.parametrize("fixture", ERRORS)
def test_error_fixture_matches_the_error_schema(fixture: str) -> None:
    validator = _validator("Pages_rollout59888_v3_pages.json", "Error")
    assert list(validator.iter_errors(load(fixture))) == []


def test_validation_would_catch_a_wrong_shape() -> None:
    body = load("site_pages_1")
    del body["results"][0]["slug"]
    validator = _validator(*LISTINGS["site_pages_1"])
    assert any("'slug' is a required property" in e.message for e in validator.iter_errors(body))


@pytest.mark.parametrize(
    ("fixture", "field", "value"),
    [
        ("blog_tags", "translatedFromId", "11"),  # an integer in the Tag schema
        ("blog_authors", "language", "klingon"),  # one of HubSpot's language codes
        ("blogs", "translatedFromId", 777),  # text in the Blog schema
        ("url_redirects", "redirectStyle", "301"),  # an integer
    ],
)
def test_validation_knows_the_newer_schemas(fixture: str, field: str, value: object) -> None:
    body = load(fixture)
    body["results"][0][field] = value
    assert list(_validator(*LISTINGS[fixture]).iter_errors(body)) != []
