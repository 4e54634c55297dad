"""The content-type registry: paths per API version, page sizes, promoted fields, extension."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from smuves_sync.errors import ConfigurationError, UnknownContentType
from smuves_sync.hubspot.registry import (
    DEFAULT_REGISTRY,
    ContentTypeSpec,
    FieldMap,
    RecordError,
)
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
    with pytest.raises(UnknownContentType, match=r"'blog_tag'.*site_page"):
        DEFAULT_REGISTRY.get("blog_tag")
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
def test_wrong_types_are_reported(mutate: object, message: str) -> None:
    raw = load("site_pages_1")["results"][0]
    mutate(raw)  # type: ignore[operator]
    with pytest.raises(RecordError, match=message):
        DEFAULT_REGISTRY.get("site_page").read(raw)


def test_a_result_that_is_not_an_object_is_reported() -> None:
    with pytest.raises(RecordError, match="not an object"):
        DEFAULT_REGISTRY.get("site_page").read(["a", "list"])


def test_a_new_type_is_a_few_lines_of_data() -> None:
    registry = DEFAULT_REGISTRY.with_types(
        ContentTypeSpec(
            name="url_redirect",
            paths={"v3": "/cms/v3/url-redirects"},
            page_size=100,
            fields=FieldMap(name=("routePrefix",), slug=(), url=("destination",), state=()),
        ),
        ContentTypeSpec(
            name="blog_tag",
            paths={"v3": "/cms/v3/blogs/tags", "2026-03": "/cms/blogs/2026-03/tags"},
            page_size=100,
            fields=FieldMap(slug=("slug",), url=(), state=()),
        ),
    )
    redirect = registry.get("url_redirect").read(
        {"id": "3", "routePrefix": "/old", "destination": "/new", "updated": 1700000000000}
    )
    assert (redirect.hubspot_id, redirect.name, redirect.url) == ("3", "/old", "/new")
    assert redirect.updated_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert registry.get("blog_tag").list_path("2026-03") == "/cms/blogs/2026-03/tags"
    assert "blog_tag" not in DEFAULT_REGISTRY


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
