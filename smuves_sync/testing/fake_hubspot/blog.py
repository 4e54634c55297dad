"""Builders of blog authors (BlogAuthor), blog tags (Tag), blogs (Blog) and URL redirects
(UrlMapping), on content.py's machinery.

Authors, tags and blogs come in language groups, as HubSpot's multi-language content does:
slots are taken four at a time, the first of each four is a primary in English, and each of
the next three is, by the slot's hash, either a translation of that primary (German, French
or Spanish by its place, so a group never holds a language twice) or a primary of its own.
A translation names its primary in `translatedFromId`: an integer on authors and tags (0 for
none), text on blogs ("" for none), as the schemas have it.
"""

from __future__ import annotations

from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.content import EPOCH_ISO, PAGE_SPAN, Builder, id_base
from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle, mix64
from smuves_sync.testing.fake_hubspot.spec import PortalSpec, TimestampStyle
from smuves_sync.testing.fake_hubspot.text import iso_ms, sentence, slugify, title, title_slug

_TRANSLATIONS = ("de", "fr", "es")
_FIRST_NAMES = ("Alex", "Sam", "Kim", "Noa", "Robin", "Maya", "Jonas", "Lea")
_LAST_NAMES = ("Morgan", "Rivera", "Lee", "Berg", "Novak", "Silva", "Haas", "Moreau")


class _BlogObjectBuilder(Builder):
    """Shared by the four: ids, timestamps, the archive marker and the language group."""

    # Whether `translatedFromId` is text (blogs) rather than an integer (authors, tags).
    text_reference = False
    archive_field: str | None = "deletedAt"

    def __init__(
        self,
        content_type: ContentType,
        spec: PortalSpec,
        timestamps: TimestampStyle,
        constant: dict[str, Any],
    ) -> None:
        super().__init__(id_base(content_type, spec.portal_id), PAGE_SPAN, constant)
        self.content_type = content_type
        self.host = spec.host
        self.both_timestamps = timestamps == "both"

    def primary_of(self, life: Lifecycle, slot: int) -> int | None:
        """The slot this one is a translation of, or None for a primary."""
        place = slot % 4
        if place == 0 or mix64(life.salt ^ slot ^ 0x7EA5) % 3 == 0:
            return None
        return slot - place

    def language(self, life: Lifecycle, slot: int) -> str:
        """English for a primary; a translation's language follows its place in the group."""
        return "en" if self.primary_of(life, slot) is None else _TRANSLATIONS[slot % 4 - 1]

    def group(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """`language` and `translatedFromId` of one object."""
        primary = self.primary_of(life, slot)
        reference: int | str
        if self.text_reference:
            reference = "" if primary is None else self.id_of(primary)
        else:
            reference = 0 if primary is None else int(self.id_of(primary))
        return {"language": self.language(life, slot), "translatedFromId": reference}

    def times(self, life: Lifecycle, slot: int, *, deleted_at: bool = True) -> dict[str, Any]:
        """`created`, `updated` (and their `…At` twins when asked for), and `deletedAt`."""
        created, updated = iso_ms(life.created_ms(slot)), iso_ms(self.updated_ms(life, slot))
        fields: dict[str, Any] = {"created": created, "updated": updated}
        if self.both_timestamps:
            fields["createdAt"], fields["updatedAt"] = created, updated
        if deleted_at:
            archived_ms = life.archived_ms(slot)
            fields["deletedAt"] = iso_ms(archived_ms) if archived_ms else EPOCH_ISO
        return fields

    def base_slug(self, life: Lifecycle, slot: int, slug: str) -> str:
        """A translation's slug carries its language in front, as HubSpot's do."""
        primary = self.primary_of(life, slot)
        return slug if primary is None else f"{self.language(life, slot)}/{slug}"


class AuthorBuilder(_BlogObjectBuilder):
    """Blog authors (the BlogAuthor schema)."""

    def __init__(self, spec: PortalSpec, timestamps: TimestampStyle) -> None:
        constant = {"avatar": "", "facebook": "", "linkedin": "", "twitter": ""}
        super().__init__(ContentType.BLOG_AUTHOR, spec, timestamps, constant)

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, names, contact, bio (which edits change), timestamps and language group."""
        person = self.primary_of(life, slot)
        h = mix64(life.salt ^ (slot if person is None else person))
        edited = mix64(mix64(life.salt ^ slot) ^ life.revision[slot])
        first, last = _FIRST_NAMES[h % 8], _LAST_NAMES[(h >> 3) % 8]
        full = f"{first} {last}"
        slug = self.base_slug(life, slot, f"{slugify(full)}-{slot if person is None else person}")
        return {
            "id": self.id_of(slot),
            "name": full,
            "fullName": full,
            "displayName": full,
            "slug": slug,
            "email": f"{first.lower()}.{last.lower()}{slot}@{self.host}",
            "bio": sentence(edited),
            "website": f"https://{self.host}/authors/{slug}",
            **self.group(life, slot),
            **self.times(life, slot),
        }


class TagBuilder(_BlogObjectBuilder):
    """Blog tags (the Tag schema)."""

    def __init__(self, spec: PortalSpec, timestamps: TimestampStyle) -> None:
        super().__init__(ContentType.BLOG_TAG, spec, timestamps, {})

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, name (renamed by some edits), slug, timestamps and language group."""
        primary = self.primary_of(life, slot)
        h = mix64(life.salt ^ (slot if primary is None else primary))
        revision = life.revision[slot]
        topic = title(h).split(" to ")[1]
        name = f"{topic} {slot}"
        if revision and mix64(h ^ revision) & 1:
            name = f"{name} ({revision})"
        base = f"{slugify(topic)}-{slot if primary is None else primary}"
        return {
            "id": self.id_of(slot),
            "name": name,
            "slug": self.base_slug(life, slot, base),
            **self.group(life, slot),
            **self.times(life, slot),
        }


class BlogBuilder(_BlogObjectBuilder):
    """Blogs (the Blog schema of the blog settings API)."""

    text_reference = True

    def __init__(self, spec: PortalSpec, timestamps: TimestampStyle) -> None:
        constant = {
            "allowComments": True,
            "publicAccessRules": [],
            "publicAccessRulesEnabled": False,
        }
        super().__init__(ContentType.BLOG, spec, timestamps, constant)

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, names, URL, description (which edits change), timestamps and language group."""
        primary = self.primary_of(life, slot)
        h = mix64(life.salt ^ (slot if primary is None else primary))
        edited = mix64(mix64(life.salt ^ slot) ^ life.revision[slot])
        topic = title(h).split(" to ")[1]
        name = f"{topic} Blog" if primary is None else f"{topic} Blog ({self.language(life, slot)})"
        slug = self.base_slug(life, slot, f"blog-{slot if primary is None else primary}")
        return {
            "id": self.id_of(slot),
            "name": name,
            "publicTitle": name,
            "htmlTitle": f"{name} | {self.host}",
            "description": sentence(edited),
            "slug": slug,
            "absoluteUrl": f"https://{self.host}/{slug}",
            "listingPageId": str(int(self.id_of(slot)) + 1),
            **self.group(life, slot),
            **self.times(life, slot),
        }


class RedirectBuilder(_BlogObjectBuilder):
    """URL redirects (the UrlMapping schema): no language, no archive marker of their own."""

    archive_field = None

    def __init__(self, spec: PortalSpec, timestamps: TimestampStyle) -> None:
        constant = {
            "isMatchFullUrl": False,
            "isMatchQueryString": False,
            "isOnlyAfterNotFound": False,
            "isProtocolAgnostic": True,
            "isTrailingSlashOptional": True,
        }
        super().__init__(ContentType.URL_REDIRECT, spec, timestamps, constant)

    def variable(self, life: Lifecycle, slot: int) -> dict[str, Any]:
        """Id, where from, where to (which edits change), style, precedence and timestamps."""
        h = mix64(life.salt ^ slot)
        edited = mix64(h ^ life.revision[slot])
        pattern = h % 10 == 0
        source = f"/old/{title_slug(h)}-{slot}"
        target = f"https://{self.host}/{title_slug(edited)}"
        return {
            "id": self.id_of(slot),
            "routePrefix": source + "/:rest" if pattern else source,
            "destination": target + "/:rest" if pattern else target,
            "isPattern": pattern,
            "redirectStyle": 302 if edited % 4 == 0 else 301,
            "precedence": slot + 1,
            **self.times(life, slot, deleted_at=False),
        }


BUILDERS = {
    ContentType.BLOG_AUTHOR: AuthorBuilder,
    ContentType.BLOG_TAG: TagBuilder,
    ContentType.URL_REDIRECT: RedirectBuilder,
    ContentType.BLOG: BlogBuilder,
}
