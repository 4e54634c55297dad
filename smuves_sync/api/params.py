"""What several routes take, declared once: the path parameters that name a portal and one of
its objects, the page size, and the check that the caller may see the portal.

A portal that is not the caller's answers 404, as one that does not exist does (a portal's
existence is not told to strangers).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from smuves_sync.api.errors import found
from smuves_sync.api.schemas import MAX_ID, StorableText
from smuves_sync.db import Database
from smuves_sync.db.portals import PortalAccess, portal_access
from smuves_sync.models import ContentType

PortalId = Annotated[int, Path(gt=0, le=MAX_ID, description="HubSpot portal id")]
TypePath = Annotated[ContentType, Path(description="its content type")]
HubSpotId = Annotated[
    StorableText, Path(min_length=1, max_length=200, description="its HubSpot id")
]
PageLimit = Annotated[int, Query(ge=1, le=200)]


async def member_portal(db: Database, portal_id: int) -> PortalAccess:
    """The portal as the caller sees it; 404 when it is none of theirs."""
    return found(await portal_access(db, portal_id), f"portal {portal_id}")
