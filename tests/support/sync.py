"""The sync tests' bench: the fake HubSpot with the test's portals, and the databases.

    pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)   # portals, then ServerConfig

    async def test_x(sync: Sync) -> None:
        portal = await sync.plant_portal()                # SPEC's portal, its token encrypted
        await start_fetch(sync.worker_db, portal)
        await Runner(sync.worker_db, sync.settings, kinds=[JobKind.FETCH], burst=True).run()
        assert await sync.stored(portal, ContentType.SITE_PAGE) == sync.truth(
            portal, ContentType.SITE_PAGE
        )

The `hubspot` marker names the portals the fake serves and its `ServerConfig` (`config=`, and
fields to change in it); without one the fake serves no portal (enough for work that must not
need HubSpot).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import pytest
from pydantic import SecretStr

from smuves_sync.db import Database
from smuves_sync.models import ContentType
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    FakeControl,
    FakeHubSpot,
    Poison,
    PortalSpec,
    ServerConfig,
    TruthItem,
)
from smuves_sync.testing.fake_hubspot.cli import parse_portal
from smuves_sync.token_crypto import TokenCipher
from tests.support.commands import SECRET, smuves_env
from tests.support.logins import runtime_urls
from tests.support.sql import query

if TYPE_CHECKING:  # factories imports tests.support, whose __init__ imports this module
    from tests.support.factories import Factory

TOKEN = "pat-na1-sync-token"


def fake_portal(
    portal_id: int,
    counts: str,
    *,
    seed: int,
    archived_share: float = 0.05,
    token: str = TOKEN,
    poison: tuple[Poison, ...] = (),
) -> PortalSpec:
    """A portal of the fake, its `counts` written as the fake's `--portal` flag writes them:
    site pages, landing pages, blog posts, tables, rows per table[, authors, tags, redirects,
    blogs]; `poison` spoils some of its objects."""
    text = f"{portal_id}:{token}:{counts}:{seed}"
    return replace(
        parse_portal(text, default_seed=seed, archived_share=archived_share), poison=poison
    )


F = TypeVar("F", bound=FakeControl)
Fact = tuple[str, datetime, bool]


def hubspot_setup(request: pytest.FixtureRequest) -> tuple[tuple[PortalSpec, ...], ServerConfig]:
    """The portals and server configuration of the test's `hubspot` marker."""
    marker = request.node.get_closest_marker("hubspot")
    if marker is None:
        return (), ServerConfig()
    fields = dict(marker.kwargs)
    config = fields.pop("config", None) or ServerConfig()
    return tuple(marker.args), replace(config, **fields)


def sync_settings(db_url: str, base_url: str, **overrides: Any) -> Settings:
    """Settings for a worker talking to the fake at `base_url`: fast polls and retries."""
    values: dict[str, Any] = {
        "database_url": db_url,
        **runtime_urls(db_url),
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
    """The fake's portal in the database, with its token stored encrypted and its time zone, as
    connecting it would have stored them."""
    cipher = TokenCipher(SecretStr(SECRET))
    return await factory.portal(
        portal_id=spec.portal_id,
        token_encrypted=cipher.encrypt(SecretStr(spec.token)),
        time_zone=spec.time_zone,
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


@dataclass(frozen=True)
class Served(Generic[F]):
    """A running fake HubSpot: its control handle, its URL and the portals it serves."""

    fake: F
    base_url: str
    specs: tuple[PortalSpec, ...]


@dataclass(frozen=True)
class SyncBed(Generic[F]):
    """A fake HubSpot on 127.0.0.1 and this test's database, as a sync test works with them."""

    fake: F
    base_url: str
    specs: tuple[PortalSpec, ...]
    db_url: str
    db: Database  # the login role: plant and check
    worker_db: Database  # smuves_worker: what runners and handlers work with
    factory: Factory

    @property
    def settings(self) -> Settings:
        """A worker's settings: this database, the fake, quick polls and retries."""
        return sync_settings(self.db_url, self.base_url)

    def settings_with(self, **overrides: Any) -> Settings:
        """`settings` with some fields changed."""
        return sync_settings(self.db_url, self.base_url, **overrides)

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a `smuves` subprocess against this database and fake (`extra`
        adds or overrides)."""
        return smuves_env(self.db_url, self.base_url, **extra)

    async def plant_portal(self, spec: PortalSpec | None = None) -> int:
        """A portal the fake serves (the only one when `spec` is None) in the database."""
        if spec is None:
            [spec] = self.specs
        return await plant_portal(self.factory, spec)

    def truth(self, portal_id: int, content_type: ContentType) -> list[Fact]:
        """What the fake serves of a type, as facts."""
        return truth_facts(self.fake.ground_truth(portal_id, content_type))

    async def stored(
        self, portal_id: int, content_type: ContentType, *, deleted: bool = False
    ) -> list[Fact]:
        """What the database holds of a type, as facts."""
        return await stored_facts(self.db, portal_id, content_type, deleted=deleted)


# The `sync` fixture: a fake in a thread of this process.
Sync = SyncBed[FakeHubSpot]
