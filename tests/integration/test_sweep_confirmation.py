"""The deletion sweep's answers go through the same checks as a listed page, and every type is
asked about the way its HubSpot spec allows (batch read, else GET by id)."""

from __future__ import annotations

import pytest

from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.models import ContentType, Job, JobStatus, RunStatus
from smuves_sync.testing.fake_hubspot import FakeHubSpot, Poison, PoisonKind
from smuves_sync.workers.context import JobContext
from smuves_sync.workers.sweep import finish_fetch
from tests.support import TOKEN, Sync, fake_portal, query

POSTS = ContentType.BLOG_POST
SPEC = fake_portal(
    7301,
    "0,0,12,0,0,6,0,6,0",
    seed=4,
    archived_share=0.0,
    poison=(
        Poison(PoisonKind.BAD_FIELD, POSTS, 2),  # its name is a number
        Poison(PoisonKind.NO_ID, POSTS, 5),  # no id at all
    ),
)

pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)


def ids(fake: FakeHubSpot, content_type: ContentType) -> list[str]:
    """Every object's id in slot order, poisoned ones included."""
    collection = fake.portal(SPEC.portal_id).collection(content_type)
    return [collection.builder.id_of(slot) for slot in range(len(collection.life.archived))]


async def sweep(
    sync: Sync, portal: int, content_type: ContentType, stored: list[str], seen: list[str]
) -> Job:
    """A fetch job of `content_type` whose listing saw `seen`, over rows stored for `stored`,
    finished by the sweep."""
    factory, settings = sync.factory, sync.settings
    run = await factory.run(portal, status=RunStatus.RUNNING)
    job = await factory.job(run, content_type=content_type, status=JobStatus.RUNNING)
    for hubspot_id in stored:
        await factory.content_item(run, hubspot_id, content_type=content_type)
    await factory.seen(job, *seen)
    ctx = JobContext(job, sync.worker_db, settings, RateLimitRegistry(), "test-worker")
    async with HubSpotClient(portal, TOKEN, settings, ctx.limits) as client:
        return await finish_fetch(ctx, client, job)


async def test_an_unseen_object_hubspot_holds_but_that_cannot_be_read_is_set_aside(
    sync: Sync,
) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    every = ids(fake, POSTS)
    bad_field, no_id = every[2], every[5]
    seen = [i for i in every if i not in (bad_field, no_id)]

    done = await sweep(sync, portal, POSTS, every, seen)

    assert done.status is JobStatus.COMPLETED
    rows = {r["hubspot_id"]: r for r in await query(db, "sync_content_of_portal", portal_id=portal)}
    # HubSpot holds both: neither is marked deleted, neither is the sweep's failure.
    assert [i for i, r in rows.items() if r["deleted_at"] is not None] == []
    rejects = await query(db, "sync_rejects_of_portal", portal_id=portal)
    assert sorted((r["run_id"], r["hubspot_id"]) for r in rejects) == sorted(
        [(done.run_id, bad_field), (done.run_id, no_id)]
    )
    assert {r["hubspot_id"]: r["reason"] for r in rejects}[bad_field] == (
        "field 'name' is int, expected text"
    )


@pytest.mark.parametrize(
    ("content_type", "asked_by"),
    [
        (ContentType.BLOG_AUTHOR, "batch read"),
        (ContentType.URL_REDIRECT, "id"),
    ],
)
async def test_the_new_types_are_asked_about_as_their_specs_allow(
    sync: Sync, content_type: ContentType, asked_by: str
) -> None:
    fake, db = sync.fake, sync.db
    portal = await sync.plant_portal()
    every = ids(fake, content_type)
    missed, never = every[0], "300000000999"
    fake.reset_stats()

    done = await sweep(sync, portal, content_type, [*every, never], every[1:])

    assert done.status is JobStatus.COMPLETED
    rows = {r["hubspot_id"]: r for r in await query(db, "sync_content_of_portal", portal_id=portal)}
    assert rows[missed]["deleted_at"] is None
    assert [i for i, r in rows.items() if r["deleted_at"] is not None] == [never]
    statuses = fake.stats(SPEC.portal_id).by_status
    if asked_by == "batch read":
        # live (207: one not there), then archived (207: neither there)
        assert statuses == {207: 2}
    else:
        # the missed one: found live; the other: 404 live and archived
        assert statuses == {200: 1, 404: 2}
