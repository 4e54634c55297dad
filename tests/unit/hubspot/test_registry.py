"""The content-type registry: paths per API version, page sizes, promoted fields, extension."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from smuves_sync.content_fields import FieldMap, RecordError
from smuves_sync.content_types import ContentTypeSpec
from smuves_sync.errors import ConfigurationError, UnknownContentType
from smuves_sync.hubspot.registry import DEFAULT_REGISTRY
from smuves_sync.models import ContentType
from tests.unit.hubspot.fixtures import load


def test_every_content_type_is_registered() -> None:
    assert set(DEFAULT_REGISTRY.names()) == {t.value for t in ContentType}


@pytest.mark.parametrize(
    ("word", "v3", "dated", "page_size"),
    [
        ("site_page", "/cms/v3/pages/site-pages", "/cms/pages/2026-03/site-pages", 100),
        ("landing_page", "/cms/v3/pages/landing-pages", "/cms/pages/2026-03/landing-pages", 100),
        ("blog_post", "/cms/v3/blogs/posts", "/cms/blogs/2026-03/posts", 100),
        ("hubdb_table", "/cms/v3/hubdb/tables", "/cms/hubdb/2026-03/tables", 1000),
        ("blog_author", "/cms/v3/blogs/authors", "/cms/blogs/2026-03/authors", 100),
        ("blog_tag", "/cms/v3/blogs/tags", "/cms/blogs/2026-03/tags", 100),
        ("url_redirect", "/cms/v3/url-redirects", "/cms/url-redirects/2026-03", 100),
        # No dated blog-settings API is specified: the v3 listing serves both versions.
        ("blog", "/cms/v3/blog-settings/settings", "/cms/v3/blog-settings/settings", 100),
    ],
)
def test_list_paths_and_page_sizes(word: str, v3: str, dated: str, page_size: int) -> None:
    spec = DEFAULT_REGISTRY.get(word)
    assert spec.list_path("v3") == v3
    assert spec.list_path("2026-03") == dated
    assert spec.page_size == page_size


def test_hubdb_rows_are_listed_per_table() -> None:
    spec = DEFAULT_REGISTRY.get("hubdb_row")
    assert spec.parent == "hubdb_table"
    assert spec.page_size == 1000
    assert spec.list_path("v3", "1001") == "/cms/v3/hubdb/tables/1001/rows"
    assert spec.list_path("2026-03", "my table") == "/cms/hubdb/2026-03/tables/my%20table/rows"
    with pytest.raises(ValueError, match="parent id"):
        spec.list_path("v3")


def test_unknown_words_and_versions_are_refused() -> None:
    with pytest.raises(UnknownContentType, match=r"'blog_topic'.*site_page"):
        DEFAULT_REGISTRY.get("blog_topic")
    with pytest.raises(ConfigurationError, match="2099-01"):
        DEFAULT_REGISTRY.get("site_page").list_path("2099-01")


def test_site_page_promoted_fields() -> None:
    raw = load("site_pages_1")["results"][0]
    record = DEFAULT_REGISTRY.get("site_page").read(raw)
    assert record.content_type == "site_page"
    assert record.hubspot_id == raw["id"]
    assert (record.name, record.slug, record.url) == (raw["name"], raw["slug"], raw["url"])
    assert (record.state, record.language) == ("PUBLISHED", "en")
    assert record.updated_at == datetime.fromisoformat(raw["updated"])
    assert record.archived is False
    assert record.raw is raw


def test_updated_at_is_accepted_in_both_spellings() -> None:
    spec = DEFAULT_REGISTRY.get("site_page")
    raw = load("site_pages_1")["results"][0]
    del raw["updated"]
    raw["updatedAt"] = "2025-06-01T00:00:00.123Z"
    assert spec.read(raw).updated_at == datetime(2025, 6, 1, 0, 0, 0, 123000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("archived_at", "archived"),
    [
        (0, False),
        ("1970-01-01T00:00:00Z", False),
        ("1970-01-01T00:00:00.000Z", False),
        ("", False),
        (None, False),
        (1740069900000, True),
        ("2025-02-20T16:45:00Z", True),
    ],
)
def test_archived_at_epoch_means_live(archived_at: object, archived: bool) -> None:
    raw = load("blog_posts")["results"][0]
    raw["archivedAt"] = archived_at
    assert DEFAULT_REGISTRY.get("blog_post").read(raw).archived is archived


def test_the_archived_pass_marks_records_archived() -> None:
    raw = load("blog_posts")["results"][0]
    assert DEFAULT_REGISTRY.get("blog_post").read(raw, archived_pass=True).archived is True


def test_hubdb_table_and_row_fields() -> None:
    table = load("hubdb_tables")["results"][0]
    record = DEFAULT_REGISTRY.get("hubdb_table").read(table)
    assert (record.hubspot_id, record.name, record.slug) == ("1001", "Cities", "cities")
    assert (record.state, record.archived) == ("PUBLISHED", False)
    gone = load("hubdb_tables_archived")["results"][0]
    assert DEFAULT_REGISTRY.get("hubdb_table").read(gone).archived is True

    row = load("hubdb_rows_1001_1")["results"][0]
    record = DEFAULT_REGISTRY.get("hubdb_row").read(row, parent_id="1001")
    assert record.hubspot_id == "1001:5001"
    assert (record.name, record.slug, record.url) == ("Berlin", "berlin", None)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.pop("id"), "usable 'id'"),
        (lambda r: r.update(id=True), "usable 'id'"),
        (lambda r: r.update(name=12), "'name' is int"),
        (lambda r: r.update(updated="yesterday"), "'updated' is not a timestamp"),
        (lambda r: r.update(archivedAt=[1]), "'archivedAt' is not a timestamp"),
    ],
)
def test_wrong_types_are_reported(mutate: Callable[[dict[str, Any]], object], message: str) -> None:
    raw = load("site_pages_1")["results"][0]
    mutate(raw)
    with pytest.raises(RecordError, match=message):
        DEFAULT_REGISTRY.get("site_page").read(raw)


def test_a_result_that_is_not_an_object_is_reported() -> None:
    with pytest.raises(RecordError, match="not an object"):
        DEFAULT_REGISTRY.get("site_page").read(["a", "list"])


def test_a_new_type_is_a_few_lines_of_data() -> None:
    # Two listings HubSpot has that the product does not store: the URL mappings beside the
    # redirects, and the blog "topics" of its older API.
    registry = DEFAULT_REGISTRY.with_types(
        ContentTypeSpec(
            name="url_mapping",
            paths={"v3": "/cms/url-redirects/v3/url-mappings"},
            page_size=100,
            fields=FieldMap(name=("routePrefix",), slug=(), url=("destination",), state=()),
        ),
        ContentTypeSpec(
            name="blog_topic",
            paths={"v3": "/blogs/v3/topics", "2026-03": "/blogs/2026-03/topics"},
            page_size=100,
            fields=FieldMap(slug=("slug",), url=(), state=()),
        ),
    )
    redirect = registry.get("url_mapping").read(
        {"id": "3", "routePrefix": "/old", "destination": "/new", "updated": 1700000000000}
    )
    assert (redirect.hubspot_id, redirect.name, redirect.url) == ("3", "/old", "/new")
    assert redirect.updated_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert registry.get("blog_topic").list_path("2026-03") == "/blogs/2026-03/topics"
    assert "blog_topic" not in DEFAULT_REGISTRY


def test_blog_author_and_tag_fields_with_their_language_group() -> None:
    authors = load("blog_authors")["results"]
    spec = DEFAULT_REGISTRY.get("blog_author")
    primary, english = (spec.read(raw) for raw in authors)
    assert (primary.hubspot_id, primary.name, primary.slug, primary.url) == (
        "555",
        "Grace Hopper",
        "grace-hopper",
        None,
    )
    assert (primary.language, primary.translated_from_id, primary.archived) == ("de", None, False)
    assert (english.language, english.translated_from_id) == ("en", "555")
    assert primary.updated_at == datetime(2025, 1, 10, 9, 30, tzinfo=UTC)
    [gone] = load("blog_authors_archived")["results"]
    assert spec.read(gone).archived is True

    tags = [DEFAULT_REGISTRY.get("blog_tag").read(raw) for raw in load("blog_tags")["results"]]
    assert [(t.hubspot_id, t.name, t.language, t.translated_from_id) for t in tags] == [
        ("11", "Datenbanken", "de", None),
        ("12", "Warteschlangen", "de", None),
        ("13", "Databases", "en", "11"),
    ]
    assert {t.state for t in tags} == {None}
    [gone] = load("blog_tags_archived")["results"]
    assert DEFAULT_REGISTRY.get("blog_tag").read(gone).archived is True


def test_url_redirect_fields() -> None:
    spec = DEFAULT_REGISTRY.get("url_redirect")
    assert spec.archived_pass
    first, pattern = (spec.read(raw) for raw in load("url_redirects")["results"])
    assert (first.hubspot_id, first.name, first.url) == ("3212223134", "/old-page", "/new-page")
    assert (first.slug, first.state, first.language, first.translated_from_id) == (None,) * 4
    assert pattern.name == "/news/:slug"
    assert first.archived is False
    # A redirect carries no archived flag: only the archived pass marks it.
    [gone] = load("url_redirects_archived")["results"]
    assert spec.read(gone).archived is False
    assert spec.read(gone, archived_pass=True).archived is True


def test_blog_fields_with_its_language_group() -> None:
    spec = DEFAULT_REGISTRY.get("blog")
    german, english = (spec.read(raw) for raw in load("blogs")["results"])
    assert (german.hubspot_id, german.name, german.slug) == ("777", "Technik-Blog", "blog")
    assert german.url == "https://blog.example.com/blog"
    assert (german.language, german.translated_from_id) == ("de", None)
    assert (english.language, english.translated_from_id) == ("en", "777")
    [gone] = load("blogs_archived")["results"]
    assert spec.read(gone).archived is True


@pytest.mark.parametrize(
    ("value", "read"),
    [("", None), ("0", None), (0, None), (None, None), ("123", "123"), (123, "123")],
)
def test_translated_from_id_is_text_or_a_number_and_empty_means_none(
    value: object, read: str | None
) -> None:
    raw = load("site_pages_1")["results"][0]
    raw["translatedFromId"] = value
    assert DEFAULT_REGISTRY.get("site_page").read(raw).translated_from_id == read


def test_a_translated_from_id_of_another_kind_is_reported() -> None:
    raw = load("blog_tags")["results"][0]
    raw["translatedFromId"] = [11]
    with pytest.raises(RecordError, match="'translatedFromId' is list, expected an id"):
        DEFAULT_REGISTRY.get("blog_tag").read(raw)


def test_each_type_names_the_scope_it_needs() -> None:
    scopes = {t.value: t.spec.scope for t in ContentType}
    assert scopes == {
        "site_page": "content",
        "landing_page": "content",
        "blog_post": "content",
        "hubdb_table": "hubdb",
        "hubdb_row": "hubdb",
        "blog_author": "content",
        "blog_tag": "content",
        "url_redirect": "content",
        "blog": "content",
    }


def test_a_registry_refuses_duplicates_and_orphans() -> None:
    spec = DEFAULT_REGISTRY.get("site_page")
    with pytest.raises(ValueError, match="twice"):
        DEFAULT_REGISTRY.with_types(spec)
    with pytest.raises(ValueError, match="parent type 'nope'"):
        DEFAULT_REGISTRY.with_types(
            ContentTypeSpec(
                name="child", paths={"v3": "/x/{parent_id}"}, page_size=1, parent="nope"
            )
        )
