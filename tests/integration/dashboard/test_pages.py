"""The dashboard's pages render what the database holds (in-process, signed in)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html import unescape

import httpx

from smuves_sync.db import Database
from smuves_sync.db.hubspot_minutes import hubspot_minute_record
from smuves_sync.db.portals import portal_mark_token_refused
from smuves_sync.errors import HubSpotUnreachable
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.queue import Queue
from smuves_sync.settings import Settings
from smuves_sync.workers.failures import Fail, outcome_for
from tests.support.factories import Factory


def rows_of(html: str, table_class: str) -> list[str]:
    """The <tr> elements of the table with `table_class` in its classes."""
    start = html.index(table_class)
    body = html[html.index("<tbody>", start) : html.index("</tbody>", start)]
    return re.findall(r"<tr.*?</tr>", body, re.DOTALL)


async def test_overview_shows_counts_charts_runs_in_flight_and_failures(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory, db: Database
) -> None:
    run = await factory.run(status=RunStatus.RUNNING)
    await factory.job(run, status=JobStatus.RUNNING, total=1200, processed=300)
    await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.FAILED,
        attempts=3,
        last_error="HubSpot answered 503 three times",
        finished_at=datetime.now(UTC),
    )
    await hubspot_minute_record(db, requests=42, rate_limited=3)

    page = await dashboard.get("/")

    assert page.status_code == 200
    html = page.text
    assert "Jobs by kind and state" in html and "Oldest due job has waited" in html
    assert html.count('<svg class="chart"') == 3
    assert "42 requests in the last 60 minutes" in html
    assert "3 429 answers in the last 60 minutes" in html
    assert f'<a href="/runs/{run.id}">Run {run.id}</a>' in html
    assert 'aria-label="site_page of run' in html and "300 of 1,200" in html and "25%" in html
    assert "HubSpot answered 503 three times" in html
    assert 'sse-connect="/events/overview"' in html


async def test_runs_are_filtered_and_paged_newest_first(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    portal = await factory.portal(name="Paged")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    runs = [
        await factory.run(portal, status=RunStatus.COMPLETED, created_at=base + timedelta(hours=h))
        for h in range(53)
    ]
    failed = await factory.run(status=RunStatus.FAILED, created_at=base - timedelta(days=3))

    first = await dashboard.get(f"/runs?portal={portal}")
    assert len(rows_of(first.text, "stack runs")) == 50
    assert f'href="/runs/{runs[-1].id}"' in first.text
    older = re.search(r'href="(/runs\?[^"]*before=[^"]+)"', first.text)
    assert older, "no link to older runs"
    second = await dashboard.get(older.group(1).replace("&amp;", "&"))
    shown = rows_of(second.text, "stack runs")
    assert len(shown) == 3 and f'href="/runs/{runs[0].id}"' in second.text

    only_failed = await dashboard.get("/runs?status=failed")
    assert len(rows_of(only_failed.text, "stack runs")) == 1
    assert f'href="/runs/{failed.id}"' in only_failed.text
    by_date = await dashboard.get("/runs?from=2025-12-29&to=2025-12-29")
    assert f'href="/runs/{failed.id}"' in by_date.text
    none = await dashboard.get("/runs?kind=export")
    assert "No run matches" in none.text

    bad = await dashboard.get("/runs?status=exploded")
    assert bad.status_code == 400 and "unknown value" in bad.text
    assert (await dashboard.get("/runs?from=yesterday")).status_code == 400
    assert (await dashboard.get("/runs?before=nonsense")).status_code == 400


async def test_a_run_page_shows_its_jobs_leases_cursors_errors_and_notifications(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    user = await factory.user("owner@example.com")
    run = await factory.run(owner=user, status=RunStatus.RUNNING)
    await factory.job(
        run,
        status=JobStatus.RUNNING,
        locked_by="worker-7:1234",
        total=500,
        processed=200,
        cursor="c1.eyJhIjoxfQ",
        attempts=2,
    )
    await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.FAILED,
        last_error="gave up after 3 attempts",
    )
    await factory.notification(user, run, kind="job_failed")

    page = await dashboard.get(f"/runs/{run.id}")

    html = page.text
    assert page.status_code == 200
    assert "worker-7:1234" in html and "c1.eyJhIjoxfQ" in html
    assert "200 of 500" in html and "40%" in html and "2 / 3" in html
    assert "gave up after 3 attempts" in html
    assert "owner@example.com" in html and "job_failed" in html
    assert f'action="/runs/{run.id}/stop"' in html
    assert f'sse-connect="/runs/{run.id}/events"' in html and 'sse-close="end"' in html

    missing = await dashboard.get("/runs/987654")
    assert missing.status_code == 404
    assert (await dashboard.get("/runs/99999999999999999999")).status_code == 400


REACH = (
    "HubSpotRetryableError: HubSpot could not be reached or failed; it is tried again while "
    "attempts remain"
)


async def test_a_run_page_groups_errors_by_cause_and_folds_each_cursor(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.FAILED)
    nine = [
        await factory.job(
            run,
            content_type=t,
            status=JobStatus.FAILED,
            attempts=3,
            cursor=f"cursor-of-{t}-" + "QUJDREVGR0hJSktMTU5PUA==" * 3,
            last_error=f"HubSpotRetryableError: could not complete GET /{t}: ConnectError",
            last_error_public=REACH,
        )
        for t in ContentType
    ]
    scope = await factory.job(
        run,
        content_type=ContentType.BLOG_POST,
        status=JobStatus.FAILED,
        last_error="blog_post is not available for portal 1 (403): the private app lacks it",
    )
    await factory.job(run, content_type=ContentType.SITE_PAGE, status=JobStatus.COMPLETED)

    html = (await dashboard.get(f"/runs/{run.id}")).text

    causes = rows_of(html, "stack compact causes")
    assert len(causes) == 2
    first, second = causes
    assert 'id="cause-1"' in first and f"{len(ContentType)} types</strong>: " in first
    assert ", ".join(str(t) for t in ContentType) in first
    assert html.count(REACH) == 1, "one row names the cause, not one per job"
    assert f"As raised: {len(ContentType)} different texts" in first
    assert "could not complete GET /hubdb_row: ConnectError" in first
    assert all(f'href="#job-{job.id}"' in first for job in nine)
    assert "1 type</strong>: blog_post" in second and "(403)" in second
    assert f'href="#job-{scope.id}"' in second
    jobs = rows_of(html, "stack compact jobs")
    assert len(jobs) == len(ContentType) + 2
    assert '<a href="#cause-1">cause 1</a>' in jobs[0]
    assert '<a href="#cause-2">cause 2</a>' in jobs[-2] and "cause" not in jobs[-1]
    # The cursor is no column: each is folded away in its job's progress cell.
    assert '<th scope="col">Cursor</th>' not in html
    folded = re.findall(r'<details class="cursor">(.*?)</details>', html, re.DOTALL)
    assert len(folded) == len(ContentType)
    assert f"<code>cursor-of-site_page-{'QUJDREVGR0hJSktMTU5PUA==' * 3}</code>" in folded[0]


async def test_a_run_without_errors_shows_no_causes(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    run = await factory.run(status=RunStatus.COMPLETED)
    await factory.job(run, status=JobStatus.COMPLETED, total=3, processed=3)

    html = (await dashboard.get(f"/runs/{run.id}")).text

    assert "by cause" not in html and len(rows_of(html, "stack compact jobs")) == 1


async def test_the_dead_letter_lists_failed_jobs_with_advice(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    portal = await factory.portal(name="Acme")
    run = await factory.run(portal)
    scope = await factory.job(
        run,
        status=JobStatus.FAILED,
        attempts=1,
        last_error="blog_post is not available for portal 1 (403): the private app lacks the scope",
    )
    other = await factory.job(
        await factory.run(), content_type=ContentType.BLOG_POST, status=JobStatus.FAILED
    )
    await factory.job(run, content_type=ContentType.HUBDB_ROW, status=JobStatus.STOPPED)

    page = await dashboard.get("/dead-letter")

    rows = rows_of(page.text, "stack dead")
    assert len(rows) == 2 and f"dead-{other.id}" in rows[0] and f"dead-{scope.id}" in rows[1]
    assert "Grant the scope" in rows[1]
    assert f'name="only" value="{scope.id}"' in rows[1]
    assert 'formaction="/dead-letter/requeue"' in rows[1]
    assert f'<label for="pick-{scope.id}" class="visually-hidden">Select job {scope.id}' in rows[1]
    mine = await dashboard.get(f"/dead-letter?portal={portal}")
    assert len(rows_of(mine.text, "stack dead")) == 1
    assert f"Retry all failed jobs of portal {portal}" in mine.text
    stopped = await dashboard.get("/dead-letter?status=stopped")
    assert len(rows_of(stopped.text, "stack dead")) == 1
    assert (await dashboard.get("/dead-letter?status=running")).status_code == 400


async def test_portals_show_syncs_counts_and_schedules(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory
) -> None:
    portal = await factory.portal(portal_id=4242, name="Shop", token_encrypted=b"x")
    done = await factory.run(portal, status=RunStatus.COMPLETED)
    await factory.job(
        done,
        status=JobStatus.COMPLETED,
        total=2,
        processed=2,
        finished_at=datetime.now(UTC) - timedelta(hours=2),
    )
    await factory.content_item(done)
    await factory.content_item(done)
    live = await factory.run(portal, kind=JobKind.FETCH, status=RunStatus.RUNNING)
    await factory.job(
        live, content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING, total=10, processed=5
    )
    next_fire = datetime(2030, 5, 4, 3, 0, tzinfo=UTC)
    await factory.schedule(portal, cron_expression="0 3 * * *", next_run_at=next_fire)

    page = await dashboard.get("/portals")

    html = page.text
    assert 'Shop <span class="id">(4242)</span>' in html and "HubSpot token stored" in html
    types = rows_of(html, "types")
    assert "2 objects" in types[0] and "2 / 0 / 0" in types[0]
    assert f"run {live.id}" in types[2] and "5 of 10" in types[2]
    assert "2030-05-04 03:00:00 UTC" in html and "0 3 * * *" in html
    assert 'action="/portals/4242/sync"' in html
    assert (await dashboard.get("/portals?portal=1")).text.count('class="portal"') == 0


async def test_a_portal_whose_token_hubspot_refused_shows_it_needs_reconnecting(
    dashboard: httpx.AsyncClient, signed_in: str, factory: Factory, db: Database
) -> None:
    await factory.portal(portal_id=4343, name="Refused", token_encrypted=b"x")
    await factory.portal(portal_id=4344, name="Fine", token_encrypted=b"y")
    assert await portal_mark_token_refused(db, 4343)

    html = (await dashboard.get("/portals")).text

    refused, fine = html.split('class="portal"')[1:3]
    assert "needs reconnect" in refused and "HubSpot token stored" not in refused
    assert "smuves portal add 4343 --name NAME --token-stdin" in refused
    assert "needs reconnect" not in fine and "HubSpot token stored" in fine


async def test_a_run_page_says_in_words_that_hubspot_was_unreachable(
    dashboard: httpx.AsyncClient,
    signed_in: str,
    factory: Factory,
    worker_db: Database,
    settings: Settings,
) -> None:
    portal = await factory.portal()
    run = await factory.run(portal)
    await factory.job(run)
    queue = Queue(worker_db, settings, worker_id="test-worker")
    [job] = await queue.claim(None)
    unreachable = HubSpotUnreachable(
        "unreachable", lasted=3600.0, cause="connection refused", portal_id=portal
    )
    outcome = outcome_for(job, unreachable)
    assert isinstance(outcome, Fail)
    await queue.fail(job, outcome.message, retryable=outcome.retryable, public=outcome.public)

    page = unescape((await dashboard.get(f"/runs/{run.id}")).text)
    # The job's error (the operators') and the run's one note (its users') say it in words.
    assert "(connection refused) — check HubSpot's status page" in page
    assert f"run `smuves sync {portal}` again" in page
    assert "(connection refused): check HubSpot's status page" in page
    assert "HubSpotUnreachable" not in page
