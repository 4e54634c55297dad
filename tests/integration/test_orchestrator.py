"""Starting runs: one set of jobs however many ask at once, partial overlaps, refusals."""

from __future__ import annotations

import pytest

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.errors import (
    AllDuplicateJobs,
    InvalidInput,
    NotFound,
    NotPermitted,
    UnknownContentType,
)
from smuves_sync.models import ContentType, ExportFormat, JobKind, JobStatus, RunStatus
from smuves_sync.orchestrator import (
    FetchStarted,
    parse_content_types,
    start_export,
    start_fetch,
)
from tests.support import all_at_once, query
from tests.support.factories import Factory

ALL = tuple(ContentType)


async def test_twenty_concurrent_requests_make_one_run_and_nineteen_duplicates(
    db_url: str, factory: Factory, db: Database
) -> None:
    portal = await factory.portal()
    # Twenty sessions, so the twenty transactions really overlap in the database.
    async with pool_for(db_url, role=DbRole.WORKER, min_size=20, max_size=20) as pool:
        worker = Database(pool)
        outcomes = await all_at_once(
            20, lambda: start_fetch(worker, portal), return_exceptions=True
        )

    started = [o for o in outcomes if isinstance(o, FetchStarted)]
    refused = [o for o in outcomes if isinstance(o, AllDuplicateJobs)]
    assert (len(started), len(refused)) == (1, 19)
    [winner] = started
    assert [j.content_type for j in winner.jobs] == list(ALL)
    assert dict(winner.skipped) == {}
    assert {r.run_ids for r in refused} == {(winner.run.id,)}
    assert all("ALL_DUPLICATE_JOBS" in str(r) for r in refused)
    # Refused requests leave no empty run behind.
    runs = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert [(r["id"], r["status"]) for r in runs] == [(winner.run.id, "pending")]
    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert sorted(j["content_type"] for j in jobs) == sorted(str(t) for t in ALL)


async def test_a_partial_overlap_creates_only_the_new_types(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await start_fetch(worker_db, portal, [ContentType.BLOG_POST, ContentType.SITE_PAGE])

    second = await start_fetch(worker_db, portal)

    assert [j.content_type for j in first.jobs] == [ContentType.SITE_PAGE, ContentType.BLOG_POST]
    assert [j.content_type for j in second.jobs] == [
        ContentType.LANDING_PAGE,
        ContentType.HUBDB_TABLE,
        ContentType.HUBDB_ROW,
        ContentType.BLOG_AUTHOR,
        ContentType.BLOG_TAG,
        ContentType.URL_REDIRECT,
        ContentType.BLOG,
    ]
    assert dict(second.skipped) == {
        ContentType.SITE_PAGE: first.run.id,
        ContentType.BLOG_POST: first.run.id,
    }
    assert second.run.content_types == ALL
    assert all(j.run_id == second.run.id and j.status is JobStatus.PENDING for j in second.jobs)
    jobs = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert len(jobs) == len(ALL) == 9


async def test_a_type_is_free_again_once_its_job_finished(
    factory: Factory, worker_db: Database
) -> None:
    portal = await factory.portal()
    run = await factory.run(portal, status=RunStatus.COMPLETED)
    await factory.job(run, content_type=ContentType.SITE_PAGE, status=JobStatus.COMPLETED)

    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])

    assert [j.content_type for j in started.jobs] == [ContentType.SITE_PAGE]
    assert started.jobs[0].max_attempts == 3


async def test_every_type_in_flight_names_the_runs_holding_them(
    factory: Factory, worker_db: Database
) -> None:
    portal = await factory.portal()
    a = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    b = await start_fetch(worker_db, portal, [ContentType.BLOG_POST])

    with pytest.raises(AllDuplicateJobs) as raised:
        await start_fetch(worker_db, portal, [ContentType.BLOG_POST, ContentType.SITE_PAGE])

    assert raised.value.run_ids == (a.run.id, b.run.id)
    assert raised.value.code == "ALL_DUPLICATE_JOBS"


async def test_a_refusal_inside_a_callers_transaction_leaves_it_usable(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await factory.portal()
    first = await start_fetch(worker_db, portal)

    # As the operator: a worker starts no export (it writes an exports row only under a lease).
    async with db.for_portal(portal) as tx:
        with pytest.raises(AllDuplicateJobs):
            await start_fetch(tx, portal)
        # The caller's transaction (a scheduler holding a schedule row lock) goes on.
        export = await start_export(tx, portal, ContentType.SITE_PAGE, ExportFormat.CSV)

    runs = await query(db, "sync_runs_of_portal", portal_id=portal)
    assert [r["id"] for r in runs] == [first.run.id, export.run.id]


async def test_an_unknown_portal_is_not_found_and_changes_nothing(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    with pytest.raises(NotFound, match="portal 424242 is not known"):
        await start_fetch(worker_db, 424242)
    with pytest.raises(InvalidInput, match="positive"):
        await start_fetch(worker_db, -1)
    assert await query(db, "run_statuses") == []


async def test_the_app_role_starts_runs_only_for_its_owners_and_editors(
    factory: Factory, app_db: Database, db: Database
) -> None:
    member = await factory.user()
    viewer = await factory.user()
    stranger = await factory.user()
    portal = await factory.portal(members=[viewer])
    await factory.member(portal, member, "editor")

    async with app_db.as_user(member) as scoped:
        started = await start_fetch(scoped, portal, [ContentType.SITE_PAGE], owner_id=member)
    assert started.run.owner_id == member

    async with app_db.as_user(stranger) as scoped:
        with pytest.raises(NotFound):
            await start_fetch(scoped, portal, owner_id=stranger)
    with pytest.raises(NotPermitted, match="owners and editors"):
        async with app_db.as_user(viewer) as scoped:
            await start_fetch(scoped, portal, [ContentType.BLOG_POST], owner_id=viewer)
    assert await query(db, "run_statuses") == [{"status": "pending", "n": 1}]


async def test_start_export_creates_a_run_a_job_and_an_exports_row(
    factory: Factory, db: Database
) -> None:
    portal = await factory.portal()

    started = await start_export(db, portal, ContentType.SITE_PAGE, ExportFormat.CSV)

    assert started.run.kind is JobKind.EXPORT
    assert started.job.kind is JobKind.EXPORT
    assert started.export.path is None
    assert (started.export.format, started.export.status) == (ExportFormat.CSV, JobStatus.PENDING)
    with pytest.raises(AllDuplicateJobs):
        await start_export(db, portal, ContentType.SITE_PAGE, ExportFormat.JSONL)
    exports = await query(db, "sync_exports_of_portal", portal_id=portal)
    assert len(exports) == 1


def test_content_type_words_are_validated_and_put_in_order() -> None:
    assert parse_content_types(["hubdb_row", "site_page", "site_page"]) == (
        ContentType.SITE_PAGE,
        ContentType.HUBDB_ROW,
    )
    with pytest.raises(UnknownContentType, match="known types: site_page"):
        parse_content_types(["blog_posts"])
    with pytest.raises(InvalidInput, match="no content type"):
        parse_content_types([" "])
