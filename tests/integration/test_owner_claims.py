"""Claims shared among owners (enqueue_job's place in line): an owner with many busy portals
does not crowd out an owner with one — through the real enqueue and claim SQL."""

from __future__ import annotations

import uuid

from smuves_sync.db import Database
from smuves_sync.models import ContentType, JobPriority
from smuves_sync.orchestrator import start_fetch
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from tests.support import claim_one_at_a_time
from tests.support.factories import Factory

FOUR = (ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST, ContentType.BLOG)


async def busy_portals(
    factory: Factory, db: Database, owner: uuid.UUID, portals: int, priority: JobPriority
) -> list[int]:
    """`portals` portals of `owner`, made busy one after another with four fetch jobs each."""
    ids = [await factory.portal(owner) for _ in range(portals)]
    for portal in ids:
        await start_fetch(db, portal, FOUR, priority=priority)
    return ids


async def test_an_owner_with_one_portal_takes_turns_with_an_owner_with_five(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    agency, customer = await factory.user(), await factory.user()
    many = await busy_portals(factory, db, agency, 5, JobPriority.SCHEDULED)
    [one] = await busy_portals(factory, db, customer, 1, JobPriority.SCHEDULED)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 24)

    # Before, the customer's portal was one of six in turn: claims 6, 12, 18 and 24.
    owners = "".join("B" if job.portal_id == one else "A" for job in order)
    assert owners == "ABAABAABAAAB" + "A" * 12
    assert {job.portal_id for job in order[:11]} == {*many, one} - {many[4]}
    assert order[12].portal_id == many[4]


async def test_an_owner_that_became_busy_first_still_alternates(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    agency, customer = await factory.user(), await factory.user()
    [one] = await busy_portals(factory, db, customer, 1, JobPriority.SCHEDULED)
    await busy_portals(factory, db, agency, 5, JobPriority.SCHEDULED)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 24)

    owners = "".join("B" if job.portal_id == one else "A" for job in order)
    assert owners == "BABAABAAB" + "A" * 15


async def test_an_owners_portals_take_turns_among_themselves(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    owner = await factory.user()
    first, second, third = await busy_portals(factory, db, owner, 3, JobPriority.SCHEDULED)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 12)

    # A portal that became busy when its owner had n busy portals has every n-th turn of its
    # owner's: the first one's jobs stand closer together than the later ones'.
    assert [job.portal_id for job in order] == [
        first, first, second, first, third, first,
        second, second, third, second, third, third,
    ]  # fmt: skip


async def test_priorities_still_come_before_owners_turns(
    factory: Factory, db: Database, worker_db: Database, settings: Settings
) -> None:
    agency, customer = await factory.user(), await factory.user()
    first, *_ = await busy_portals(factory, db, agency, 4, JobPriority.SCHEDULED)
    [person] = await busy_portals(factory, db, agency, 1, JobPriority.INTERACTIVE)
    [scheduled] = await busy_portals(factory, db, customer, 1, JobPriority.SCHEDULED)

    order = await claim_one_at_a_time(Queue(worker_db, settings), 6)

    assert [job.portal_id for job in order[:4]] == [person] * 4
    assert [job.priority for job in order[:4]] == [JobPriority.INTERACTIVE] * 4
    assert [job.portal_id for job in order[4:]] == [first, scheduled]
