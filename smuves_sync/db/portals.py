"""Portals, their owners and members: noun-verb functions over ``queries/portals.sql``.

    portal = await portal_get(db, 123)                          # Portal | None (as visible)
    owner = await app_user_ensure(db, "ops@example.com")        # created when missing
    portal = await portal_save(db, 123, "Acme", owner, token_encrypted)

They take a `Database` (scoped or not) like its own methods do; only the login role may
write portals with their tokens.
"""

from __future__ import annotations

import uuid
from typing import Any

from smuves_sync.db.database import Database
from smuves_sync.models import Portal


def _portal(row: dict[str, Any]) -> Portal:
    return Portal(
        id=row["id"], name=row["name"], owner_id=row["owner_id"], created_at=row["created_at"]
    )


async def portal_get(db: Database, portal_id: int) -> Portal | None:
    """The portal `portal_id`, or None when it does not exist or is not visible."""
    # Same package as Database: its row helpers are ours to use.
    row = await db._one("portal_by_id", {"portal_id": portal_id})
    return _portal(row) if row else None


async def app_user_ensure(db: Database, email: str) -> uuid.UUID:
    """The id of the user with `email`, created when missing."""
    row = await db._one("app_user_ensure", {"email": email})
    assert row is not None  # INSERT … ON CONFLICT DO UPDATE … RETURNING always returns it
    return uuid.UUID(str(row["id"]))


async def portal_save(
    db: Database, portal_id: int, name: str, owner_id: uuid.UUID, token_encrypted: bytes | None
) -> Portal:
    """Add the portal or update its name, owner and token; the owner is made a member."""
    async with db.transaction() as scoped:
        row = await scoped._one(
            "portal_save",
            {
                "portal_id": portal_id,
                "name": name,
                "owner_id": owner_id,
                "token_encrypted": token_encrypted,
            },
        )
        assert row is not None
        await scoped._execute("portal_owner_member", {"portal_id": portal_id, "user_id": owner_id})
    return _portal(row)
