"""The database itself refuses words it does not know, and in-flight duplicates."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest
from psycopg import errors as pg_errors

from smuves_sync.models import ContentType, JobKind, JobStatus
from tests.support.factories import Factory


async def test_an_unknown_content_type_is_refused(factory: Factory) -> None:
    run = await factory.run()
    with pytest.raises(
        pg_errors.CheckViolation, match=r'domain content_type .* "content_type_known"'
    ):
        await factory.job(run, content_type="blog_topic")  # type: ignore[arg-type]


async def test_an_unknown_job_kind_is_refused(factory: Factory) -> None:
    portal = await factory.portal()
    with pytest.raises(pg_errors.CheckViolation, match=r'domain job_kind .* "job_kind_known"'):
        await factory.run(portal, kind="import")  # type: ignore[arg-type]


async def test_an_unknown_content_type_in_a_run_is_refused(factory: Factory) -> None:
    portal = await factory.portal()
    with pytest.raises(pg_errors.CheckViolation, match="content_type_known"):
        await factory.run(portal, content_types=["site_page", "pages"])  # type: ignore[list-item]


async def test_a_second_in_flight_job_for_one_portal_kind_and_type_is_refused(
    factory: Factory,
) -> None:
    first_run = await factory.run()
    await factory.job(first_run, content_type=ContentType.BLOG_POST)
    second_run = await factory.run(first_run.portal_id)
    with pytest.raises(pg_errors.UniqueViolation, match="jobs_in_flight_uniq"):
        await factory.job(second_run, content_type=ContentType.BLOG_POST)
    # a running one blocks too
    await factory.job(first_run, content_type=ContentType.SITE_PAGE, status=JobStatus.RUNNING)
    with pytest.raises(pg_errors.UniqueViolation, match="jobs_in_flight_uniq"):
        await factory.job(second_run, content_type=ContentType.SITE_PAGE)


async def test_finished_jobs_do_not_block_a_new_one(factory: Factory) -> None:
    run = await factory.run(kind=JobKind.FETCH)
    for status in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.STOPPED):
        await factory.job(run, content_type=ContentType.HUBDB_ROW, status=status)
    job = await factory.job(run, content_type=ContentType.HUBDB_ROW)
    assert job.status is JobStatus.PENDING


async def test_a_job_cannot_belong_to_another_portals_run(factory: Factory) -> None:
    run = await factory.run()
    other = await factory.portal()
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        await factory.job(dataclasses.replace(run, portal_id=other))
