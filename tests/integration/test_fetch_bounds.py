"""The fetch handler against a HubSpot whose listing never ends, or whose page holds too many
objects (respx; a real Postgres)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest
import respx
from pydantic import SecretStr

from smuves_sync.db import Database
from smuves_sync.db.runs import run_get
from smuves_sync.models import ContentType, JobKind, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.token_crypto import TokenCipher
from smuves_sync.workers.runner import Runner
from tests.support import SECRET, TOKEN, query
from tests.support.factories import Factory
from tests.support.sync import sync_settings
from tests.unit.hubspot.fixtures import load

BASE_URL = "https://hubspot.test"
COUNTED = 250


def endless_site_pages(request: httpx.Request) -> httpx.Response:
    """HubSpot counts 250 live pages and no archived ones, then lists pages of 100 with a
    fresh cursor each time (giving up after 60 pages, so that an unbounded client ends)."""
    params = request.url.params
    template = load("site_pages_1")["results"][0]
    if params.get("archived") == "true":
        return httpx.Response(200, json={"total": 0, "results": []})
    if params.get("limit") == "1":
        return httpx.Response(200, json={"total": COUNTED, "results": [template]})
    start = int(params.get("after", "0"))
    body: dict[str, object] = {
        "total": COUNTED,
        "results": [{**template, "id": str(70_000_000 + n)} for n in range(start, start + 100)],
    }
    if start < 5900:
        body["paging"] = {"next": {"after": str(start + 100)}}
    return httpx.Response(200, json=body)


async def test_a_listing_that_never_ends_fails_its_job_at_once_and_says_why(
    factory: Factory, db: Database, worker_db: Database, db_url: str
) -> None:
    token = TokenCipher(SecretStr(SECRET)).encrypt(SecretStr(TOKEN))
    portal = await factory.portal(token_encrypted=token)
    started = await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    runner = Runner(
        worker_db,
        sync_settings(db_url, BASE_URL),
        kinds=[JobKind.FETCH],
        concurrency=1,
        burst=True,
    )
    with respx.mock(base_url=BASE_URL) as router:
        route = router.get("/cms/v3/pages/site-pages").mock(side_effect=endless_site_pages)
        stats = await asyncio.wait_for(runner.run(), 60)

    assert (stats.completed, stats.failed) == (0, 1)
    [job] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    # Failed for good on its first attempt: a retry would resume from the runaway's cursor.
    # Its total rose with its progress (never below it); HubSpot's count is in the error.
    assert (job["status"], job["attempts"], job["total"]) == ("failed", 1, job["processed"])
    assert "site_page listing does not end" in job["last_error"]
    assert f"HubSpot's count of {COUNTED}" in job["last_error"]
    # max(2 x 250, 250 + 10 pages of 100) = 1,250: twelve pages stored, the 13th refused.
    assert job["processed"] == 1200
    stored = await query(db, "sync_content_of_portal", portal_id=portal)
    assert len(stored) == 1200
    assert all(r["deleted_at"] is None for r in stored)
    assert route.call_count == 2 + 13  # two counts, thirteen pages
    run = await run_get(db, started.run.id)
    assert run is not None and run.status is RunStatus.FAILED


def oversized_page(request: httpx.Request) -> httpx.Response:
    """HubSpot counts 201 pages, then answers a page of 100 with all 201."""
    template = load("site_pages_1")["results"][0]
    if request.url.params.get("limit") == "1":
        return httpx.Response(200, json={"total": 201, "results": [template]})
    results = [{**template, "id": str(80_000_000 + n)} for n in range(201)]
    return httpx.Response(200, json={"total": 201, "results": results})


def page_of_tiny_objects(request: httpx.Request) -> httpx.Response:
    """HubSpot counts one page, then answers with it and millions of empty objects in it."""
    template = load("site_pages_1")["results"][0]
    if request.url.params.get("limit") == "1":
        return httpx.Response(200, json={"total": 1, "results": [template]})
    head = json.dumps({"total": 1, "results": [{**template, "n": []}]}).encode()
    return httpx.Response(
        200, content=head.replace(b'"n": []', b'"n": [' + b"{}," * 10**6 + b"{}]")
    )


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (oversized_page, "201 results on a page of 100 (at most 200 are read)"),
        (page_of_tiny_objects, "the body holds more than 2,000,000 JSON values"),
    ],
)
async def test_a_page_of_too_many_objects_is_refused_as_malformed_and_stores_nothing(
    factory: Factory,
    db: Database,
    worker_db: Database,
    db_url: str,
    answer: Callable[[httpx.Request], httpx.Response],
    why: str,
) -> None:
    token = TokenCipher(SecretStr(SECRET)).encrypt(SecretStr(TOKEN))
    portal = await factory.portal(token_encrypted=token)
    await start_fetch(worker_db, portal, [ContentType.SITE_PAGE])
    runner = Runner(
        worker_db, sync_settings(db_url, BASE_URL), kinds=[JobKind.FETCH], concurrency=1, burst=True
    )
    with respx.mock(base_url=BASE_URL) as router:
        route = router.get("/cms/v3/pages/site-pages").mock(side_effect=answer)
        await asyncio.wait_for(runner.run(), 60)

    # As any malformed page: the attempt fails, and the job waits for its backoff.
    [job] = await query(db, "sync_jobs_of_portal", portal_id=portal)
    assert (job["status"], job["attempts"], job["processed"]) == ("pending", 1, 0)
    assert job["last_error"].startswith("MalformedResponse: ")
    assert f"GET /cms/v3/pages/site-pages: {why}" in job["last_error"]
    assert await query(db, "sync_content_of_portal", portal_id=portal) == []
    assert route.call_count == 2 + 1  # the live and archived counts, the refused page once
