"""`/v1/portals/{id}/content`: a portal's live content, keyset-paginated, with a text filter.

Pages follow the primary key (content type, HubSpot id), so a page costs the same however deep
it is and rows written meanwhile neither repeat nor vanish between pages. `next` is an opaque
cursor (the last key, base64url of JSON); `q` matches name, slug or url, case-insensitively,
as plain text (``%`` and ``_`` are not wildcards). `/content/{type}/{hubspot_id}` is one
object. With `with=translations` each object comes with its language variants: the other
live members of its language group (its primary, and the objects translated from that).
Objects come back as HubSpot sent them: text stored escaped (NULs, lone surrogates:
smuves_sync.content_text) is decoded.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from smuves_sync.api.auth import CurrentPrincipal
from smuves_sync.api.context import Context, user_session
from smuves_sync.api.cursors import decode_page_cursor, encode_page_cursor
from smuves_sync.api.errors import error_responses, found
from smuves_sync.api.params import HubSpotId, PageLimit, PortalId, TypePath, member_portal
from smuves_sync.api.schemas import (
    ContentItemOut,
    ContentPageOut,
    StorableText,
    TranslationOut,
)
from smuves_sync.content_text import unescape_text, unescape_value
from smuves_sync.db.content import ContentItem, content_language_groups, content_page
from smuves_sync.models import ContentType

With = Annotated[
    Literal["translations"] | None,
    Query(alias="with", description="translations: each object with its language variants"),
]
Groups = dict[tuple[ContentType, str], tuple[ContentItem, ...]]


def encode_cursor(key: tuple[ContentType, str]) -> str:
    """The opaque `next` cursor of a key."""
    return encode_page_cursor([str(key[0]), key[1]])


def decode_cursor(cursor: str) -> tuple[ContentType, str]:
    """The key of a cursor `encode_cursor` made; 422 naming `after` otherwise."""
    return decode_page_cursor(cursor, _content_key)


def _content_key(decoded: Any) -> tuple[ContentType, str]:
    content_type, hubspot_id = decoded
    if not isinstance(hubspot_id, str) or "\x00" in hubspot_id:
        raise ValueError(hubspot_id)
    return ContentType(content_type), hubspot_id


def like_pattern(text: str) -> str:
    """An ILIKE pattern matching `text` anywhere, its wildcards taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class ContentJSONResponse(JSONResponse):
    """JSON as FastAPI writes it; a lone surrogate HubSpot sent goes back as the JSON escape
    it came as (UTF-8 cannot carry it)."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            text = json.dumps(content, allow_nan=False, separators=(",", ":"))
            return text.encode("ascii")


# Every route here answers its bodies in one way: ContentJSONResponse.
router = APIRouter(
    tags=["content"],
    responses=error_responses(401, 404, 422),
    default_response_class=ContentJSONResponse,
)


@router.get(
    "/v1/portals/{portal_id}/content",
    summary="A portal's content, a page at a time",
)
async def list_content(
    portal_id: PortalId,
    ctx: Context,
    principal: CurrentPrincipal,
    type: Annotated[ContentType | None, Query(description="only this content type")] = None,
    q: Annotated[
        StorableText | None,
        Query(min_length=1, max_length=200, description="text in name, slug or url"),
    ] = None,
    limit: PageLimit = 50,
    after: Annotated[
        str | None, Query(max_length=1000, description="`next` of the previous page")
    ] = None,
    with_: With = None,
) -> ContentPageOut:
    """Live objects (deleted ones are left out), ordered by type and HubSpot id."""
    key = decode_cursor(after) if after is not None else None
    async with user_session(ctx, principal) as db:
        await member_portal(db, portal_id)
        page = await content_page(
            db,
            portal_id,
            content_type=type,
            pattern=like_pattern(q) if q is not None else None,
            after=key,
            limit=limit,
        )
        groups = None
        if with_ == "translations":
            keys = [(item.content_type, item.hubspot_id) for item in page.items]
            groups = await content_language_groups(db, portal_id, keys, with_data=False)
    return ContentPageOut(
        items=[_item_out(item, groups) for item in page.items],
        next=encode_cursor(page.last_key) if page.last_key else None,
    )


@router.get(
    "/v1/portals/{portal_id}/content/{type}/{hubspot_id}",
    summary="One object of a portal's content",
)
async def get_content(
    portal_id: PortalId,
    type: TypePath,
    hubspot_id: HubSpotId,
    ctx: Context,
    principal: CurrentPrincipal,
    with_: With = None,
) -> ContentItemOut:
    """A live object (404 once it is deleted), with its language variants if asked for."""
    async with user_session(ctx, principal) as db:
        await member_portal(db, portal_id)
        key = (type, hubspot_id)
        groups = await content_language_groups(db, portal_id, [key], with_data=True)
    members = groups.get(key, ())
    item = found(
        next((m for m in members if m.hubspot_id == hubspot_id), None),
        f"{type} {hubspot_id} of portal {portal_id}",
    )
    return _item_out(item, groups if with_ == "translations" else None)


def _item_out(item: ContentItem, groups: Groups | None) -> ContentItemOut:
    """The object, and its language variants when `groups` were looked up; as HubSpot sent
    them."""
    out = ContentItemOut.model_validate(decoded(item))
    if groups is None:
        return out
    members = groups.get((item.content_type, item.hubspot_id), ())
    variants = [
        TranslationOut.model_validate(decoded(m))
        for m in members
        if m.hubspot_id != item.hubspot_id
    ]
    return out.model_copy(update={"translations": variants})


def decoded(item: ContentItem) -> ContentItem:
    """`item` with its stored text decoded (smuves_sync.content_text): NULs and lone
    surrogates as HubSpot sent them."""
    return dataclasses.replace(
        item,
        name=_unescape(item.name),
        slug=_unescape(item.slug),
        url=_unescape(item.url),
        state=_unescape(item.state),
        language=_unescape(item.language),
        translated_from_id=_unescape(item.translated_from_id),
        data=unescape_value(item.data),
    )


def _unescape(value: str | None) -> str | None:
    return None if value is None else unescape_text(value)
