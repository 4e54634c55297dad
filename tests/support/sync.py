"""Shared bits of the fetch, export and runner tests: settings, portals with tokens, truth.

    portal = await plant_portal(factory, SPEC)        # the fake's portal, its token encrypted
    settings = sync_settings(db_url, base_url)        # a worker's: quick polls and retries
    assert await stored_facts(db, portal, t) == truth_facts(fake.ground_truth(portal, t))

Facts are (id, updated, archived) triples, sorted: what HubSpot serves and what is stored
compare as equal lists.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from smuves_sync.db import Database
from smuves_sync.models import ContentType
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import PortalSpec, TruthItem
from smuves_sync.token_crypto import TokenCipher
from tests.support.commands import SECRET
from tests.support.sql import query

if TYPE_CHECKING:  # tests.factories imports this package
    from tests.factories import Factory

TOKEN = "pat-na1-sync-token"

Fact = tuple[str, datetime, bool]


def sync_settings(db_url: str, base_url: str, **overrides: Any) -> Settings:
    """Settings for a worker talking to the fake at `base_url`: fast polls and retries."""
    values: dict[str, Any] = {
        "database_url": db_url,
        "hubspot_base_url": base_url,
        "secret_key": SecretStr(SECRET),
        "poll_interval_seconds": 0.2,
        "backoff_base_seconds": 0.05,
        "backoff_max_seconds": 0.2,
        "hubspot_max_retries": 1,
        "shutdown_grace_seconds": 0,
    }
    values.update(overrides)
    return Settings(**values)


async def plant_portal(factory: Factory, spec: PortalSpec) -> int:
    """The fake's portal in the database, with its token stored encrypted."""
    cipher = TokenCipher(SecretStr(SECRET))
    return await factory.portal(
        portal_id=spec.portal_id, token_encrypted=cipher.encrypt(SecretStr(spec.token))
    )


def truth_facts(items: Iterable[TruthItem]) -> list[Fact]:
    """(id, updated, archived) of what HubSpot serves, sorted."""
    return sorted((i.hubspot_id, i.updated_at, i.archived) for i in items)


async def stored_facts(
    db: Database, portal_id: int, content_type: ContentType, *, deleted: bool = False
) -> list[Fact]:
    """(id, updated, archived) of the stored live (or deleted) rows of a type, sorted."""
    rows = await query(db, "sync_content_of_portal", portal_id=portal_id)
    return sorted(
        (r["hubspot_id"], r["hubspot_updated_at"], r["archived"])
        for r in rows
        if r["content_type"] == content_type.value and (r["deleted_at"] is not None) == deleted
    )
