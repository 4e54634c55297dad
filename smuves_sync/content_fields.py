"""What a HubSpot object becomes: its promoted fields read into a `ContentRecord`, or, when it
cannot be read, a `RejectedObject` set aside.

`FieldMap` says where each promoted column (name, slug, url, state, language, updated_at,
archived, translated_from_id) is read from in a raw object, and `FieldMap.read` reads them;
a field of the wrong type raises `RecordError`. Ids are text: a number id is written in
decimal, so ``"4"`` and ``4`` are one object (`object_id`); an id that cannot be stored is
refused (`usable_id`). A `RejectedObject` keeps the object's id if it has a usable one, the
reason and its bytes, so that one bad object never costs the rest of its page. Like
`content_types`, which builds on it, this module imports nothing of the package but `errors`
and `content_text`, so every layer may use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from smuves_sync.content_text import replace_unstorable

T = TypeVar("T")

# HubSpot writes "not archived" as the epoch: 0 (blog posts) or 1970-01-01T00:00:00Z (pages).
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The longest id stored, in bytes of UTF-8. Ids are part of content_items' primary key, and a
# btree index refuses an entry past about 2.7 KB; HubSpot's ids are a few digits.
MAX_ID_BYTES = 1024
# A rejected object keeps at most this many bytes of itself (content_rejects.raw).
RAW_SIZE_CAP = 64 * 1024


class RecordError(ValueError):
    """A raw object lacks its id or has a promoted field of the wrong type."""


@dataclass(frozen=True, slots=True)
class RejectedObject:
    """An object HubSpot sent that cannot be stored: its id if it has a usable one, why, and the
    object as ASCII JSON (NULs and lone surrogates as JSON escapes), cut after `RAW_SIZE_CAP`
    bytes; `size` is its whole length."""

    hubspot_id: str | None
    reason: str
    raw: bytes = field(repr=False)
    size: int

    @classmethod
    def of(cls, obj: object, reason: str, hubspot_id: str | None = None) -> RejectedObject:
        """Set `obj` aside for `reason`; an id that could not be stored itself is left out."""
        try:
            text = json.dumps(obj, default=_jsonable, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            text = f"<a {type(obj).__name__} that cannot be written as JSON>"
        data = text.encode("ascii", "backslashreplace")
        usable = hubspot_id is not None and usable_id(hubspot_id) is None
        return cls(
            hubspot_id if usable else None,
            replace_unstorable(reason),
            data[:RAW_SIZE_CAP],
            len(data),
        )


def _jsonable(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    return repr(value)


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Keys each promoted field is read from; the first key present with a non-null value wins.

    An empty tuple means the type has no such field (the column stays NULL).
    """

    name: tuple[str, ...] = ("name",)
    slug: tuple[str, ...] = ("slug",)
    url: tuple[str, ...] = ("url",)
    state: tuple[str, ...] = ("state", "currentState")
    language: tuple[str, ...] = ("language",)
    # HubSpot's schemas say `updated`, its guides and sort parameters say `updatedAt`.
    updated_at: tuple[str, ...] = ("updatedAt", "updated")
    archived: tuple[str, ...] = ("archivedAt", "archived")
    # Not a column: where a keyset listing by creation time reads each object's (see
    # `ContentTypeSpec.created_keyset`).
    created_at: tuple[str, ...] = ("createdAt", "created")
    # The id of the primary object of its language group, for an object that is a translation.
    translated_from_id: tuple[str, ...] = ("translatedFromId",)

    @classmethod
    def only(cls, **keys: tuple[str, ...]) -> FieldMap:
        """A map of the fields named; every other column stays NULL (`created_at` keeps its
        keys: it is no column)."""
        absent: dict[str, tuple[str, ...]] = {
            column: () for column in cls.__dataclass_fields__ if column != "created_at"
        }
        return cls(**{**absent, **keys})

    def read(
        self, raw: Mapping[str, Any], *, content_type: str, hubspot_id: str, archived_pass: bool
    ) -> ContentRecord:
        """The record of `raw` (stored as `hubspot_id`); `RecordError` for a field of the wrong
        type. Objects of an archived pass are archived whatever they say."""
        return ContentRecord(
            content_type=content_type,
            hubspot_id=hubspot_id,
            name=_first(raw, self.name, _text),
            slug=_first(raw, self.slug, _text),
            url=_first(raw, self.url, _text),
            state=_first(raw, self.state, _state),
            language=_first(raw, self.language, _text),
            updated_at=_first(raw, self.updated_at, _timestamp),
            archived=archived_pass or bool(_first(raw, self.archived, _archived)),
            raw=raw,
            translated_from_id=_first(raw, self.translated_from_id, _reference),
        )

    def created_ms(self, raw: Mapping[str, Any]) -> int:
        """When `raw` was created, in epoch milliseconds; `RecordError` when it does not say."""
        created = _first(raw, self.created_at, _timestamp)
        if created is None:
            raise RecordError(f"object has no creation time ({', '.join(self.created_at)})")
        return round(created.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class Promoted:
    """An object's id as stored and the promoted columns every record of content shares (the
    fetched `ContentRecord`, the API's `db.content.ContentItem`)."""

    hubspot_id: str
    name: str | None
    slug: str | None
    url: str | None
    state: str | None
    language: str | None


@dataclass(frozen=True, slots=True)
class ContentRecord(Promoted):
    """One HubSpot object: its promoted columns and the object exactly as HubSpot sent it."""

    content_type: str
    updated_at: datetime | None
    archived: bool
    raw: Mapping[str, Any] = field(repr=False)
    # The primary object of its language group (None: it is a primary, or has no translations).
    translated_from_id: str | None = None


def _first(
    raw: Mapping[str, Any], keys: tuple[str, ...], read: Callable[[str, Any], T]
) -> T | None:
    """`read` of the first of `keys` that `raw` holds a non-null value for; None if none."""
    for key in keys:
        value = raw.get(key)
        if value is not None:
            return read(key, value)
    return None


def object_id(value: object, key: str) -> str:
    """`value` as a stored id (text; a number in decimal); `RecordError` when it is none."""
    # Ids are strings in every schema we read; some older endpoints send numbers, which are
    # written in decimal: "4" and 4 are one object.
    text: str | None = None
    if isinstance(value, str) and value:
        text = value
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            text = str(value)
        except ValueError:  # more digits than Python writes out
            text = None
    if text is None:
        raise RecordError(f"object has no usable {key!r} (got {type(value).__name__})")
    problem = usable_id(text)
    if problem is not None:
        raise RecordError(f"object has no usable {key!r}: {problem}")
    return text


def usable_id(text: str) -> str | None:
    """What keeps `text` from being stored as an id (a NUL, a lone surrogate, its length), or
    None when it can be."""
    if replace_unstorable(text) != text:
        return "it holds a NUL or a lone surrogate"
    size = len(text.encode())
    if size > MAX_ID_BYTES:
        return f"it is {size:,} bytes long, more than the {MAX_ID_BYTES:,} an id may have"
    return None


def _text(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise RecordError(f"field {key!r} is {type(value).__name__}, expected text")
    return value


def _reference(key: str, value: object) -> str | None:
    # An id, text in some schemas and a number in others; "" and 0 say "none" in both.
    if isinstance(value, str):
        return value if value not in ("", "0") else None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if value else None
    raise RecordError(f"field {key!r} is {type(value).__name__}, expected an id")


def _state(key: str, value: object) -> str:
    # HubDB tables say `published: true/false` where pages and posts carry a state word.
    if isinstance(value, bool):
        return "PUBLISHED" if value else "DRAFT"
    return _text(key, value)


def parse_timestamp(value: object) -> datetime:
    """An ISO 8601 string or epoch milliseconds as an aware UTC datetime; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a timestamp")
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValueError(f"{type(value).__name__} is not a timestamp")


def _timestamp(key: str, value: object) -> datetime:
    try:
        return parse_timestamp(value)
    except (ValueError, OverflowError, OSError):
        raise RecordError(f"field {key!r} is not a timestamp: {str(value)[:40]!r}") from None


def _archived(key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and not value:
        return False
    try:
        return parse_timestamp(value) != _EPOCH
    except (ValueError, OverflowError, OSError):
        shown = str(value)[:40]
        raise RecordError(f"field {key!r} is not a timestamp or flag: {shown!r}") from None
