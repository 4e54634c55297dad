"""The content types: the one list of them, and how each is listed and read from HubSpot.

`ContentType` is the list. Each member is a type's word (the `content_type` column, the CLI's
`--types` word, the API's `content_type`) and carries its `ContentTypeSpec` — pure data: its
list path per API version, page size, id field, where its promoted fields live, whether it is
listed per parent (HubDB rows per table), whether archived objects need a second pass, and the
HubSpot scope it needs. Everything else is derived from this list: the words the API, the CLI
and the row mappers accept, the HubSpot client's registry
(`smuves_sync.hubspot.registry.DEFAULT_REGISTRY`) and the scope a 403 message names
(`workers.failures`). Fetching, storing and exporting branch on no type's word, so a new type
is one more member, for example::

    BLOG_TAG = ContentTypeSpec(
        name="blog_tag",
        paths={"v3": "/cms/v3/blogs/tags", "2026-03": "/cms/blogs/2026-03/tags"},
        page_size=100,
        fields=FieldMap(url=(), state=(), archived=("deletedAt",)),
    )

and one migration that adds the word to the database's list (the `content_type` domain of
0002_schema.sql follows its `content_types` table, through content_types_constrain_domain)::

    INSERT INTO public.content_types (name) VALUES ('blog_tag');

`ContentTypeSpec.read` turns one raw HubSpot object into a `ContentRecord`: the promoted columns
(hubspot_id, name, slug, url, state, language, updated_at, archived, translated_from_id) plus
the raw object; an object it cannot read raises `RecordError`. `ContentTypeSpec.read_page`
reads a listing's results one by one and sets each object it cannot read aside as a
`RejectedObject`. How fields are read, and what a record and a reject hold, is
`content_fields`. A type that can be edited names its editable fields (`editable`, the
allow-lists below; their kinds and cells are `content_edits`). This module sits beside
`models` (which re-exports `ContentType`): it imports nothing of the package but `errors`,
`content_fields`, `content_edits` and `content_text`, so every layer may use it.
(The fake HubSpot of the tests knows the types by name: it stands in for HubSpot, so it spells
out HubSpot's paths itself rather than reading the product's.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from smuves_sync.content_edits import Editable, FieldKind
from smuves_sync.content_fields import (
    ContentRecord,
    FieldMap,
    RecordError,
    RejectedObject,
    object_id,
)
from smuves_sync.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class ContentTypeSpec:
    """Everything the client needs to list one content type."""

    name: str
    # API version ("v3", "2026-03") -> list path; a child type's path holds `{parent_id}`.
    paths: Mapping[str, str]
    page_size: int
    id_field: str = "id"
    fields: FieldMap = FieldMap()
    # A child type is listed once per object of its parent type (HubDB rows per table); its
    # hubspot_id is "<parent id>:<own id>".
    parent: str | None = None
    # A field of each parent object that counts its children (HubDB: a table's `rowCount`), so
    # the children are counted from the parent listing alone.
    parent_count_field: str | None = None
    # Whether a second pass with `archived=true` lists the archived objects.
    archived_pass: bool = True
    # How a listing that may have missed objects is made whole, and how an object the listing
    # did not see is confirmed gone: smuves_sync/workers/README.md, "How deletions are
    # confirmed". HubSpot's `after` cursors are offsets: an object deleted between two page
    # requests moves the next one back across the page boundary, and the listing never shows it.
    # created_keyset: the list endpoint takes `sort=createdAt` and `createdAfter`, so a second
    #   pass can page by the last creation time seen, which no deletion shifts; otherwise the
    #   second pass lists again from the start. It also lets a first listing count what was
    #   created since it began, so balanced creations and deletions show (hubspot/whole.py).
    created_keyset: bool = False
    # batch_read: `POST <list path>/batch/read` answers a batch of ids (with `archived=true`,
    #   the archived ones); get_by_id: `GET <list path>/<id>` answers one (404: no such one).
    batch_read: bool = False
    get_by_id: bool = True
    # The list endpoint takes `updatedAfter` with `sort=updatedAt`, so a fetch after a completed
    # one reads only what changed (workers/incremental.py); a type without them is read in
    # full every time. A child type (HubDB rows) is re-read per parent whose `updatedAt` moved.
    change_filters: bool = True
    # The field HubSpot's guides filter archived objects by (`<field>__gt=<moment>`): HubSpot's
    # CMS deletes a page, post, author or tag by archiving it without moving its `updated`, so
    # an incremental read finds what was archived since by this field (`archivedAt` on pages
    # and posts, `deletedAt` on authors and tags); None: its archived pass is read by
    # `updatedAt` like the live one.
    archive_filter: str | None = None
    # The private-app scope HubSpot asks for to list it (named when it answers 403).
    scope: str = "content"
    # The fields an edit export writes and a changeset may change (content_edits); None: the
    # type cannot be edited.
    editable: Editable | None = None

    def list_path(self, api_version: str, parent_id: str | None = None) -> str:
        """The list endpoint of this type for `api_version` (and the parent object)."""
        try:
            template = self.paths[api_version]
        except KeyError:
            raise ConfigurationError(
                f"content type {self.name!r} has no path for HubSpot API version {api_version!r}"
            ) from None
        if self.parent is None:
            return template
        if parent_id is None:
            raise ValueError(f"{self.name} is listed per {self.parent}: a parent id is needed")
        return template.format(parent_id=quote(parent_id, safe=""))

    def object_path(self, api_version: str, own_id: str, parent_id: str | None = None) -> str:
        """The endpoint of one object of this type (by its own id, not the stored one)."""
        return f"{self.list_path(api_version, parent_id)}/{quote(own_id, safe='')}"

    def created_ms(self, raw: Mapping[str, Any]) -> int:
        """When `raw` was created, in epoch milliseconds; `RecordError` when it does not say."""
        return self.fields.created_ms(raw)

    def read(
        self, raw: object, *, parent_id: str | None = None, archived_pass: bool = False
    ) -> ContentRecord:
        """Read one raw object into a record; raise `RecordError` when it has the wrong shape."""
        if not isinstance(raw, Mapping):
            raise RecordError(f"a {self.name} result is {type(raw).__name__}, not an object")
        return self.fields.read(
            raw,
            content_type=self.name,
            hubspot_id=self._stored_id(raw, parent_id),
            archived_pass=archived_pass,
        )

    def read_page(
        self,
        results: Sequence[object],
        *,
        parent_id: str | None = None,
        archived_pass: bool = False,
    ) -> tuple[tuple[ContentRecord, ...], tuple[RejectedObject, ...]]:
        """Read a listing's results: the records, and the objects `read` refused, set aside."""
        records: list[ContentRecord] = []
        rejects: list[RejectedObject] = []
        for raw in results:
            try:
                records.append(self.read(raw, parent_id=parent_id, archived_pass=archived_pass))
            except RecordError as exc:
                rejects.append(RejectedObject.of(raw, str(exc), self._id_if_any(raw, parent_id)))
        return tuple(records), tuple(rejects)

    def _id_if_any(self, raw: object, parent_id: str | None) -> str | None:
        if not isinstance(raw, Mapping):
            return None
        try:
            return self._stored_id(raw, parent_id)
        except RecordError:
            return None

    def _stored_id(self, raw: Mapping[str, Any], parent_id: str | None) -> str:
        own_id = object_id(raw.get(self.id_field), self.id_field)
        return own_id if parent_id is None else f"{parent_id}:{own_id}"


def _page_paths(kind: str) -> dict[str, str]:
    return {"v3": f"/cms/v3/pages/{kind}", "2026-03": f"/cms/pages/2026-03/{kind}"}


_TEXT, _SLUG, _BOOL = FieldKind.TEXT, FieldKind.SLUG, FieldKind.BOOL
# The allow-lists of the types that can be edited (WRITES.md, "Writable fields"): what
# HubSpot's descriptions say a PATCH may set, without the nested structures (layoutSections,
# widgets), publication (state, publishDate), access rules and language groups.
_PAGE_EDITS: dict[str, FieldKind] = {
    "name": _TEXT,
    "htmlTitle": _TEXT,
    "metaDescription": _TEXT,
    "slug": _SLUG,
    "linkRelCanonicalUrl": _TEXT,
    "featuredImage": _TEXT,
    "featuredImageAltText": _TEXT,
    "useFeaturedImage": _BOOL,
}
PAGE_EDITABLE = Editable(_PAGE_EDITS)
POST_EDITABLE = Editable(
    {**_PAGE_EDITS, "postSummary": _TEXT, "blogAuthorId": FieldKind.ID, "tagIds": FieldKind.IDS}
)
AUTHOR_EDITABLE = Editable(
    dict.fromkeys(
        (
            "fullName",
            "displayName",
            "bio",
            "email",
            "website",
            "twitter",
            "facebook",
            "linkedin",
            "avatar",
        ),
        _TEXT,
    ),
    slugs=(),
)
TAG_EDITABLE = Editable({"name": _TEXT, "slug": _SLUG})
# Every field of UrlMapping but id, created and updated.
REDIRECT_EDITABLE = Editable(
    {
        "routePrefix": _TEXT,
        "destination": _TEXT,
        "redirectStyle": FieldKind.INTEGER,
        "precedence": FieldKind.INTEGER,
        "isOnlyAfterNotFound": _BOOL,
        "isMatchFullUrl": _BOOL,
        "isMatchQueryString": _BOOL,
        "isPattern": _BOOL,
        "isTrailingSlashOptional": _BOOL,
        "isProtocolAgnostic": _BOOL,
    },
    slugs=(),
)
# A row's `path` is its page's slug within its table.
ROW_EDITABLE = Editable({"path": _SLUG, "name": _TEXT}, values=True, slugs=())


def _cms_type(
    name: str,
    paths: Mapping[str, str],
    fields: FieldMap | None = None,
    archive_filter: str = "archivedAt",
    editable: Editable | None = None,
) -> ContentTypeSpec:
    """A type listed as pages and blog posts are: 100 a page, by creation time for a second
    pass, read back in batches to confirm what a listing did not show, deleted by archiving
    (found since a moment by `archive_filter`)."""
    return ContentTypeSpec(
        name=name,
        paths=paths,
        page_size=100,
        fields=fields or FieldMap(),
        created_keyset=True,
        batch_read=True,
        archive_filter=archive_filter,
        editable=editable,
    )


class ContentType(StrEnum):
    """A kind of HubSpot CMS object; the value is the `content_type` column and the CLI word."""

    # (The docstring above is the API document's description of the type: keep it one line.)
    # Each member is defined by its spec and carries it as `.spec`; its value is the spec's name.
    _value_: str
    spec: ContentTypeSpec

    if TYPE_CHECKING:
        # What mypy sees: a look-up by word, `ContentType("site_page")`.
        def __new__(cls, value: str) -> ContentType: ...
    else:
        # What makes each member below from its spec (a look-up never calls it).
        def __new__(cls, spec):
            member = str.__new__(cls, spec.name)
            member._value_ = spec.name
            member.spec = spec
            return member

    SITE_PAGE = _cms_type("site_page", _page_paths("site-pages"), editable=PAGE_EDITABLE)
    LANDING_PAGE = _cms_type("landing_page", _page_paths("landing-pages"), editable=PAGE_EDITABLE)
    BLOG_POST = _cms_type(
        "blog_post",
        {"v3": "/cms/v3/blogs/posts", "2026-03": "/cms/blogs/2026-03/posts"},
        editable=POST_EDITABLE,
    )
    HUBDB_TABLE = ContentTypeSpec(
        name="hubdb_table",
        paths={"v3": "/cms/v3/hubdb/tables", "2026-03": "/cms/hubdb/2026-03/tables"},
        page_size=1000,
        # `name` is the table's machine name (used in URLs); `label` is what people read.
        fields=FieldMap.only(
            name=("label", "name"),
            slug=("name",),
            state=("published",),
            updated_at=("updatedAt", "updated"),
            archived=("deleted", "archivedAt", "archived"),
        ),
        # No batch read of tables: an unseen table is asked about by id.
        created_keyset=True,
        scope="hubdb",
    )
    HUBDB_ROW = ContentTypeSpec(
        name="hubdb_row",
        paths={
            "v3": "/cms/v3/hubdb/tables/{parent_id}/rows",
            "2026-03": "/cms/hubdb/2026-03/tables/{parent_id}/rows",
        },
        page_size=1000,
        fields=FieldMap.only(name=("name",), slug=("path",), updated_at=("updatedAt", "updated")),
        parent="hubdb_table",
        parent_count_field="rowCount",
        change_filters=False,
        scope="hubdb",
        editable=ROW_EDITABLE,
        # Rows of archived tables are not listed; the tables listing shows those tables.
        # Rows take neither `sort=createdAt` nor `createdAfter` (a second pass lists again);
        # `rows/batch/read` answers published rows only (no `archived`).
        batch_read=True,
    )
    # The blog's other objects and the site's redirects.
    #
    # Paging: the dated blogs API also has `…/authors/cursor` and `…/tags/cursor` listings
    # (in the tags document, beside `…/posts/cursor`). They are not used. Their spec gives
    # the answer no shape (its `CursorPagedResult…Long` schemas are empty objects: no
    # `results`, `paging` or `total`) and no description, so nothing shows that they page by
    # a true cursor rather than an offset (the `Long` hints at a numeric key; a hint is no
    # contract), and a fake validated against an empty schema would prove nothing. Every
    # type follows `paging.next.after` of its documented listing instead. That token may be
    # an offset: an object deleted while a listing runs can shift another past it. As for
    # pages and posts, the listing's completeness check and a second pass by creation time
    # find it again, and nothing unseen is marked deleted before HubSpot confirms it (by
    # batch read for authors and tags, by id for redirects and blogs, whose specs have no
    # batch read).
    BLOG_AUTHOR = _cms_type(
        "blog_author",
        {"v3": "/cms/v3/blogs/authors", "2026-03": "/cms/blogs/2026-03/authors"},
        # `fullName` is what a reader sees; `name` is a shorter alternative, often the same.
        FieldMap(name=("fullName", "name"), url=(), state=(), archived=("deletedAt",)),
        archive_filter="deletedAt",
        editable=AUTHOR_EDITABLE,
    )
    BLOG_TAG = _cms_type(
        "blog_tag",
        {"v3": "/cms/v3/blogs/tags", "2026-03": "/cms/blogs/2026-03/tags"},
        FieldMap(url=(), state=(), archived=("deletedAt",)),
        archive_filter="deletedAt",
        editable=TAG_EDITABLE,
    )
    URL_REDIRECT = ContentTypeSpec(
        name="url_redirect",
        # HubSpot's guide lists v3 redirects at /cms/v3/url-redirects (where its spec puts
        # the single redirect); the spec's own listing path is /cms/url-redirects/v3.
        paths={"v3": "/cms/v3/url-redirects", "2026-03": "/cms/url-redirects/2026-03"},
        page_size=100,
        # A redirect has no name: it is known by what it redirects (`routePrefix`), and its
        # `url` is where it sends the visitor. An archived one carries no flag of its own:
        # only the archived pass lists it.
        fields=FieldMap.only(
            name=("routePrefix",), url=("destination",), updated_at=("updatedAt", "updated")
        ),
        # No batch read of redirects: an unseen one is asked about by id.
        created_keyset=True,
        editable=REDIRECT_EDITABLE,
    )
    BLOG = ContentTypeSpec(
        name="blog",
        # HubSpot's specs have blog settings in v3 only (its reference pages mention a dated
        # /cms/blog-settings/2026-03/settings that no spec describes): the v3 listing serves
        # both versions.
        paths={
            "v3": "/cms/v3/blog-settings/settings",
            "2026-03": "/cms/v3/blog-settings/settings",
        },
        page_size=100,
        # A blog's `language` and `translatedFromId` make its language group: the primary
        # blog and one translated blog per further language.
        fields=FieldMap(url=("absoluteUrl",), state=(), archived=("deletedAt",)),
        # No batch read of blogs: an unseen one is asked about by id.
        created_keyset=True,
    )
