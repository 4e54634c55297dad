"""Incremental re-syncs end to end: `smuves sync` → HubSpot changes → `smuves sync` → changes →
`smuves sync` against the fake HubSpot, every object compared with what HubSpot serves after
each, documents and all."""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import Churn, PortalSpec
from tests.acceptance.conftest import ProcessSync
from tests.support import TOKEN, query, smuves, smuves_env

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

PORTAL = PortalSpec(
    portal_id=8301,
    token=TOKEN,
    seed=17,
    site_pages=700,
    landing_pages=120,
    blog_posts=450,
    hubdb_tables=4,
    rows_per_table=120,
    archived_share=0.05,
    blog_authors=10,
    blog_tags=40,
    url_redirects=60,
    blogs=3,
)
Key = tuple[str, str]


def served(sync: ProcessSync) -> dict[Key, tuple[Any, bool]]:
    """What HubSpot holds: (type, id) -> (the object, archived)."""
    return {
        (str(t), item.hubspot_id): (item.data, item.archived)
        for t in ContentType
        for item in sync.fake.ground_truth(PORTAL.portal_id, t, with_data=True)
    }


async def stored(sync: ProcessSync) -> dict[Key, tuple[Any, bool]]:
    """What the database holds as present: (type, id) -> (the object, archived)."""
    rows = await query(sync.db, "sync_content_of_portal", portal_id=PORTAL.portal_id)
    return {
        (r["content_type"], r["hubspot_id"]): (r["data"], r["archived"])
        for r in rows
        if r["deleted_at"] is None
    }


async def sync_exactly(sync: ProcessSync, env: dict[str, str]) -> str:
    result = await smuves(env, "sync", str(PORTAL.portal_id))
    assert result.code == 0, result.stdout + result.stderr
    assert await stored(sync) == served(sync)
    return result.stdout


@pytest.mark.hubspot(PORTAL, ten_second_limit=None, cursors="offset")
async def test_sync_change_sync_change_sync_stays_exact(sync: ProcessSync) -> None:
    await sync.plant_portal()
    env = smuves_env(sync.db_url, sync.base_url)

    first = await sync_exactly(sync, env)
    assert "incremental" not in first

    # Edits, new objects, deletions (HubSpot's: into the archive, and purged), un-archivals;
    # HubDB rows published.
    sync.fake.advance(
        PORTAL.portal_id,
        Churn(changed=0.08, deleted=0.01, added=0.03, archived=0.02, unarchived=0.2),
    )
    second = await sync_exactly(sync, env)
    assert "incremental" in second

    sync.fake.advance(PORTAL.portal_id, Churn(changed=0.02, deleted=0.0, added=0.01, archived=0.01))
    await sync_exactly(sync, env)
    reads = await query(sync.db, "sync_reads_of_portal", portal_id=PORTAL.portal_id)
    modes = [r["mode"] for r in reads]
    assert modes.count("full") == len(ContentType)
    assert modes.count("incremental") == 2 * len(ContentType)
