"""Builders: turn a slot of a lifecycle into the JSON object HubSpot would return for it.

Each builder splits an object into the fields that vary per slot and a constant remainder
that is serialised once, so encoding a page of objects costs one small encoding per object.
Field names and types follow the official OpenAPI schemas (Page, BlogPost, HubDbTableV3,
HubDbTableRowV3); `tests` validate them against those schemas. This module holds the shared
machinery (ids, `Builder`) and the pages and posts; hubdb.py the tables and rows; blog.py the
blog authors, tags and blogs (BlogAuthor, Tag, Blog) and the URL redirects (UrlMapping).
"""

from __future__ import annotations

import json
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle, mix64
from smuves_sync.testing.fake_hubspot.spec import PortalSpec, TimestampStyle
from smuves_sync.testing.fake_hubspot.text import iso_ms, paragraphs, sentence, title, title_slug
from smuves_sync.testing.fake_hubspot.writes import Overlay

EPOCH_ISO = "1970-01-01T00:00:00Z"  # HubSpot's archivedAt / deletedAt of a live object
# One reusable compact encoder: json.dumps with options builds a new encoder on every call.
encode_json = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
# Ids: a per-type base, plus a per-portal block (so two portals never share ids and a client
# that mixes up tokens is caught), plus the slot. Each block holds SPAN[type] slots.
_ID_BASE = {
    ContentType.SITE_PAGE: 100_000_000_000,
    ContentType.LANDING_PAGE: 200_000_000_000,
    ContentType.BLOG_POST: 300_000_000_000,
    ContentType.HUBDB_TABLE: 1_000_000,
    ContentType.HUBDB_ROW: 400_000_000_000,  # to 1_400_000_000_000: 100 tables per portal
    ContentType.BLOG_AUTHOR: 1_500_000_000_000,
    ContentType.BLOG_TAG: 1_600_000_000_000,
    ContentType.URL_REDIRECT: 1_700_000_000_000,
    ContentType.BLOG: 1_800_000_000_000,
}
PAGE_SPAN = 100_000_000
TABLE_SPAN = 10_000
ROW_SPAN = 10_000_000  # rows per table; a portal's block holds 100 tables' rows


def id_base(content_type: ContentType, portal_id: int, table_slot: int = 0) -> int:
    """The id of slot 0 of a collection."""
    block = portal_id % 1000
    if content_type is ContentType.HUBDB_TABLE:
        return _ID_BASE[content_type] + block * TABLE_SPAN
    if content_type is ContentType.HUBDB_ROW:
        return _ID_BASE[content_type] + block * 100 * ROW_SPAN + table_slot * ROW_SPAN
    return _ID_BASE[content_type] + block * PAGE_SPAN


EDITOR = {"id": "9001", "email": "editor@example.com", "firstName": "Alex", "lastName": "Morgan"}
_AUTHORS = (
    ("Alex Morgan", "8001"),
    ("Sam Rivera", "8002"),
    ("Kim Lee", "8003"),
    ("Noa Berg", "8004"),
)
_LANGUAGES = ("en",) * 7 + ("de", "fr", "es")


class Builder:
    """Shared machinery: the constant tail, dict and JSON forms, id <-> slot."""

    content_type: ContentType

    def __init__(self, first_id: int, span: int, constant: dict[str, Any]) -> None:
        self.first_id = first_id
        self.span = span
        self.constant = constant
        self._tail = encode_json(constant)[1:] if constant else ""
        # What writes set over the generated objects (writes.py).
        self.overlay = Overlay()

    def id_of(self, slot: int) -> str:
        """HubSpot id of the object in this slot."""
        return str(self.first_id + slot)

    def slot_of(self, object_id: str) -> int | None:
        """Inverse of `id_of`, or None for an id this builder never produces."""
        if not object_id.isdigit():
            return None
        slot = int(object_id) - self.first_id
        return slot if 0 <= slot < self.span else None

    def updated_ms(self, life: Lifecycle, slot: int) -> int:
        """The object's last update time, as served (a write moves it)."""
        return self.overlay.updated_ms(slot, life.updated_ms(slot))

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """The fields that differ between objects."""
        raise NotImplementedError

    def as_dict(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """The whole object."""
        obj = {**self.variable(life, slot), **self.constant}
        return self.overlay.apply(self, life, slot, obj) if slot in self.overlay.edits else obj

    def as_json(self, life: Lifecycle, slot: int) -> str:
        """The whole object, serialised; equal to json.dumps(as_dict(...))."""
        if slot in self.overlay.edits:
            return encode_json(self.as_dict(life, slot))
        head = encode_json(self.variable(life, slot))
        return head[:-1] + "," + self._tail if self._tail else head


def _page_constant(spec: PortalSpec, content_type: ContentType) -> dict[str, Any]:
    category = {ContentType.SITE_PAGE: 4, ContentType.LANDING_PAGE: 1, ContentType.BLOG_POST: 3}
    constant: dict[str, Any] = {
        "abStatus": "master",
        "abTestId": "",
        "attachedStylesheets": [],
        "campaign": "",
        "categoryId": category[content_type],
        "contentTypeCategory": str(category[content_type]),
        "createdById": EDITOR["id"],
        "domain": spec.host,
        "dynamicPageDataSourceId": "",
        "dynamicPageDataSourceType": 0,
        "dynamicPageHubDbTableId": "",
        "enableDomainStylesheets": False,
        "enableLayoutStylesheets": False,
        "featuredImage": "",
        "featuredImageAltText": "",
        "folderId": "",
        "footerHtml": "",
        "headHtml": "",
        "includeDefaultCustomCss": False,
        "layoutSections": {},
        "linkRelCanonicalUrl": "",
        "mabExperimentId": "",
        "pageExpiryDate": 0,
        "pageExpiryEnabled": False,
        "pageExpiryRedirectId": 0,
        "pageExpiryRedirectUrl": "",
        "password": "",
        "publicAccessRules": [],
        "publicAccessRulesEnabled": False,
        "publishImmediately": False,
        "themeSettingsValues": {},
        "translatedFromId": "",
        "translations": {},
        "updatedById": EDITOR["id"],
        "useFeaturedImage": False,
        "widgetContainers": {},
    }
    if content_type is ContentType.BLOG_POST:
        constant["contentGroupId"] = str(50_000_000 + spec.portal_id % 1_000_000)
        constant["enableGoogleAmpOutputOverride"] = False
    else:
        constant["authorName"] = _AUTHORS[0][0]
        constant["contentGroupId"] = ""
        constant["pageRedirected"] = False
        constant["subcategory"] = content_type.value
        constant["templatePath"] = f"themes/portal/templates/{content_type.value}.html"
    return constant


class PageBuilder(Builder):
    """Site pages, landing pages and blog posts (the Page and BlogPost schemas)."""

    def __init__(
        self, content_type: ContentType, spec: PortalSpec, timestamps: TimestampStyle
    ) -> None:
        first_id = id_base(content_type, spec.portal_id)
        super().__init__(first_id, PAGE_SPAN, _page_constant(spec, content_type))
        self.content_type = content_type
        self.is_post = content_type is ContentType.BLOG_POST
        self.both_timestamps = timestamps == "both"
        section = {ContentType.SITE_PAGE: "", ContentType.LANDING_PAGE: "lp/"}
        self.url_prefix = f"https://{spec.host}/{section.get(content_type, 'blog/')}"
        self.brand = f"Portal {spec.portal_id}"

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, names, state, language, timestamps, archive fields and body of one object."""
        h = mix64(life.salt ^ slot)
        revision = life.revision[slot]
        edited = mix64(h ^ revision)
        base_name = title(h)
        name = f"{base_name} ({revision})" if revision and edited & 1 else base_name
        slug = f"{title_slug(h)}-{slot}"
        roll = (h >> 16) % 100
        state = "PUBLISHED" if roll < 80 else "DRAFT" if roll < 95 else "SCHEDULED"
        created_ms = life.created_ms(slot)
        created, updated = iso_ms(created_ms), iso_ms(self.updated_ms(life, slot))
        archived_ms = life.archived_ms(slot)
        body = paragraphs(edited, 2 + (h >> 24) % 3)
        fields: dict[str, Any] = {
            "id": self.id_of(slot),
            "name": name,
            "slug": slug,
            "url": self.url_prefix + slug,
            "htmlTitle": f"{name} | {self.brand}",
            "metaDescription": sentence(edited >> 3),
            "language": _LANGUAGES[(h >> 32) % len(_LANGUAGES)],
            "state": state,
            "currentState": state,
            "currentlyPublished": state == "PUBLISHED",
            "created": created,
            "updated": updated,
            "publishDate": iso_ms(created_ms + 3_600_000),
            "archivedInDashboard": archived_ms is not None,
        }
        if self.both_timestamps:
            fields["createdAt"], fields["updatedAt"] = created, updated
        if self.is_post:
            author, author_id = _AUTHORS[(h >> 40) % len(_AUTHORS)]
            fields["archivedAt"] = archived_ms or 0
            fields["authorName"], fields["blogAuthorId"] = author, author_id
            fields["postBody"] = fields["rssBody"] = body
            fields["postSummary"] = fields["rssSummary"] = body[: body.index("</p>") + 4]
            fields["publishedAt"] = fields["publishDate"]
            fields["tagIds"] = [7_000 + (h >> (44 + 4 * i)) % 16 for i in range(1 + (h >> 60) % 3)]
            fields["widgets"] = {}
        else:
            fields["archivedAt"] = iso_ms(archived_ms) if archived_ms else EPOCH_ISO
            fields["widgets"] = {
                "main_body": {"id": "main_body", "name": "main_body", "type": "rich_text",
                              "body": {"html": body}},
            }  # fmt: skip
        return fields
