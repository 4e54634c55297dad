"""Re-syncs end to end: `smuves sync` again and again against the fake HubSpot, each time exactly
its ground truth, writing content rows only for what changed.

sync -> sync (nothing changed: no row written) -> HubSpot changes -> sync (exactly the changed,
new, archived and deleted objects written) -> a sync while people delete and create objects
during the listing (every live object present, none deleted by mistake) -> sync (exact again).
Rows written are counted by xmin: it moves exactly when a row is written.
"""

from __future__ import annotations

from typing import Any

import pytest

from smuves_sync.db import Database
from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    Churn,
    FakeHubSpotProcess,
    FaultKind,
    FaultRule,
)
from tests.acceptance.conftest import ProcessSync
from tests.support import fake_portal, query, smuves

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

# 600 + 200 + 600 + 3 tables + 3 x 150 rows = 1,853 objects.
PORTAL = fake_portal(8101, "600,200,600,3,150", seed=13)
Key = tuple[str, str]


async def versions(db: Database, portal: int) -> dict[Key, str]:
    """(type, id) -> xmin of every stored row."""
    rows = await query(db, "sync_content_of_portal", portal_id=portal)
    return {(r["content_type"], r["hubspot_id"]): r["xmin"] for r in rows}


def written(before: dict[Key, str], after: dict[Key, str]) -> set[Key]:
    return {key for key, xmin in after.items() if before.get(key) != xmin}


def snapshot(fake: FakeHubSpotProcess) -> dict[Key, tuple[Any, bool]]:
    """What HubSpot holds: (type, id) -> (the object, archived)."""
    return {
        (str(t), item.hubspot_id): (item.data, item.archived)
        for t in ContentType
        for item in fake.ground_truth(PORTAL.portal_id, t, with_data=True)
    }


async def sync_exactly(env: dict[str, str], sync: ProcessSync) -> None:
    """`smuves sync`: completed, and every type stored exactly as HubSpot serves it."""
    result = await smuves(env, "sync", str(PORTAL.portal_id))
    assert result.code == 0, result.stdout + result.stderr
    for content_type in ContentType:
        truth = sync.truth(PORTAL.portal_id, content_type)
        assert await sync.stored(PORTAL.portal_id, content_type) == truth, content_type


@pytest.mark.hubspot(PORTAL, ten_second_limit=None, cursors="offset")
async def test_a_resync_writes_exactly_what_changed_and_loses_nothing_to_drift(
    sync: ProcessSync,
) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    env = sync.env()

    await sync_exactly(env, sync)
    first = await versions(db, portal)
    assert len(first) == 1853

    await sync_exactly(env, sync)
    assert written(first, await versions(db, portal)) == set()

    held = snapshot(fake)
    fake.advance(PORTAL.portal_id, Churn(changed=0.1, deleted=0.02, added=0.02, archived=0.01))
    now = snapshot(fake)
    changed = {key for key in held.keys() & now.keys() if held[key] != now[key]}
    gone, new = held.keys() - now.keys(), now.keys() - held.keys()
    assert changed and gone and new
    before = await versions(db, portal)

    await sync_exactly(env, sync)

    assert written(before, await versions(db, portal)) == changed | gone | new
    for content_type in ContentType:
        deleted = await sync.stored(portal, content_type, deleted=True)
        assert {f[0] for f in deleted} == {i for t, i in gone if t == content_type}

    # People delete and create objects while the listings run: offsets move under them.
    drift = tuple(
        FaultRule(FaultKind.DRIFT, on_requests=(4,), content_type=t, deleted=2, created=2)
        for t in (ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST)
    )
    fake.set_faults(drift)
    # A full read: an incremental one leaves what is created during it to the next fetch.
    result = await smuves(env, "sync", str(portal), "--full")
    assert result.code == 0, result.stdout + result.stderr
    fake.set_faults(())
    for content_type in ContentType:
        truth = sync.truth(PORTAL.portal_id, content_type)
        live = await sync.stored(portal, content_type)
        assert set(truth) <= set(live), content_type  # every live object, new ones too
        deleted = await sync.stored(portal, content_type, deleted=True)
        assert {f[0] for f in deleted} == {i for t, i in gone if t == content_type}

    await sync_exactly(env, sync)
    runs = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert [r["status"] for r in runs] == ["completed"] * 5
