"""The dashboard in a real browser: Debian's chromium through Playwright, against `smuves
dashboard`, `smuves worker` and the fake HubSpot, each a subprocess, and a real Postgres.

Playwright's own browser download is not used: the tests launch the system's chromium
(`make browser` installs it). Without it they skip on a workstation and fail in CI
(CI=true), so a CI run never passes without having driven a browser. Every page is
screenshot at 1280 px and at a phone's width into the test's directory (tmp_path/screens).
The layout tests at the end plant rows with the factory, serve the app in this process and
measure the pages at 1400 px and at a phone's 390 px.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, ViewportSize, async_playwright

from smuves_sync.dashboard import DashboardAuth, create_dashboard_app
from smuves_sync.dashboard.pages import RECENT_FAILURES
from smuves_sync.db import Pool
from smuves_sync.db.jobs import job_get, job_list, job_list_in_flight
from smuves_sync.db.runs import run_get
from smuves_sync.db.workers import NO_WORKER, WorkerSeat, worker_heartbeat, worker_register
from smuves_sync.models import ContentType, JobKind, JobStatus, RunStatus
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule, ServerConfig
from tests.acceptance.conftest import ProcessSync, Spawn
from tests.support import TOKEN, db_now, eventually, fake_portal, serve_app, smuves
from tests.support.factories import Factory

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.browser]

CLEAN = fake_portal(8101, "2000,300,600,2,200,20,30,40,2", seed=11)
BROKEN = fake_portal(8102, "200,0,150,0,0", seed=12, token=TOKEN + "-broken")
# Slow enough that the bars are seen between empty and full; the blog posts of BROKEN answer
# 403 (a missing scope): the job fails at once, for good.
CONFIG = ServerConfig(
    ten_second_limit=None,
    latency_ms=60,
    faults=(
        FaultRule(
            FaultKind.STATUS,
            share=1.0,
            status=403,
            portal_id=BROKEN.portal_id,
            content_type=ContentType.BLOG_POST,
        ),
    ),
)
# The fake of the tests that sync (the `sync` fixture's).
SERVED = pytest.mark.hubspot(CLEAN, BROKEN, config=CONFIG)
PHONE = ViewportSize(width=390, height=844)
DESKTOP = ViewportSize(width=1280, height=900)
WIDE = ViewportSize(width=1400, height=900)


def chromium_path() -> str:
    """The system's chromium; a missing one fails the test in CI and skips it elsewhere."""
    found = os.environ.get("SMUVES_CHROMIUM") or shutil.which("chromium")
    if found:
        return found
    message = (
        "chromium is not installed: the dashboard's browser tests need Debian's chromium "
        "(`make browser` installs it with apt when run as root)"
    )
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def test_without_chromium_ci_fails_and_a_workstation_skips(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SMUVES_CHROMIUM", raising=False)
    monkeypatch.setattr(shutil, "which", lambda _: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="chromium is not installed"):
        chromium_path()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="make browser"):
        chromium_path()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Chromium, headless, launched from the system's binary."""
    path = chromium_path()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=path)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
def screens(tmp_path: Path) -> Path:
    """Where the screenshots go (the test's own directory)."""
    path = tmp_path / "screens"
    path.mkdir()
    return path


async def start_dashboard(spawn: Spawn, env: dict[str, str], log: Path) -> tuple[str, str]:
    """Start `smuves dashboard --port 0`; (its base URL, the login link it printed)."""
    await spawn(env, "dashboard", "--port", "0", log=log)
    found: list[re.Match[str]] = []

    async def printed() -> bool:
        text = log.read_text() if log.exists() else ""
        match = re.search(r"(http://127\.0\.0\.1:\d+)/login\?token=\S+", text)
        if match:
            found.append(match)
        return match is not None

    await eventually(printed, timeout=60)
    return found[0].group(1), found[0].group(0)


async def sign_in(page: Page, link: str) -> None:
    """Open the printed link and press Sign in: the overview shows."""
    await page.goto(link)
    await page.get_by_label("Your name").fill("Ada (browser test)")
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(re.compile(r"/$"))
    assert await page.get_by_role("heading", name="Overview", exact=True).is_visible()


async def screenshot_everywhere(page: Page, base: str, screens: Path, run_id: int) -> None:
    """Each page at 1280 px and at a phone's width; none is wider than the phone."""
    pages = {
        "overview": "/",
        "runs": "/runs",
        "run": f"/runs/{run_id}",
        "dead-letter": "/dead-letter",
        "portals": "/portals",
    }
    for size_name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        await page.set_viewport_size(size)
        for name, path in pages.items():
            await page.goto(base + path)
            await page.screenshot(path=screens / f"{name}-{size_name}.png", full_page=True)
            if size is PHONE:
                width = await page.evaluate("document.documentElement.scrollWidth")
                assert width <= PHONE["width"], f"{name} is {width} px wide on a phone"
    await page.set_viewport_size(DESKTOP)


@SERVED
async def test_sign_in_sync_and_watch_every_bar_reach_100_percent(
    sync: ProcessSync, spawn: Spawn, browser: Browser, screens: Path, tmp_path: Path
) -> None:
    db = sync.db
    portal = await sync.plant_portal(CLEAN)
    env = sync.env(SMUVES_DASHBOARD_REFRESH_SECONDS="0.25")
    base, link = await start_dashboard(spawn, env, tmp_path / "dashboard.log")
    page = await browser.new_page(viewport=DESKTOP)
    await sign_in(page, link)

    await page.goto(f"{base}/portals?portal={portal}")
    await page.get_by_role("button", name=f"Sync portal {portal} now").click()
    assert await page.get_by_role("heading", name=f"Confirm: Sync portal {portal}").is_visible()
    await page.screenshot(path=screens / "confirm-sync.png")
    await page.get_by_role("button", name=f"Sync portal {portal}", exact=True).click()
    await page.wait_for_url(re.compile(r"/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    bars = page.locator("#run-jobs progress")
    assert await bars.count() == len(ContentType)
    # Marks that a reload would wipe, and a record of every percentage the page showed.
    await page.evaluate(
        """() => {
            window.__sameDocument = true;
            window.__seen = new Set();
            const note = () => document.querySelectorAll('#run-jobs .pct')
                .forEach(p => window.__seen.add(p.textContent));
            note();
            new MutationObserver(note).observe(document.body, {subtree: true, childList: true});
        }"""
    )

    worker = await spawn(env, "worker", "--burst", "--concurrency", "3", log=tmp_path / "w.log")
    await page.wait_for_function(
        """(types) => {
            const bars = [...document.querySelectorAll('#run-jobs progress')];
            const rows = [...document.querySelectorAll('#run-jobs tr[data-status]')];
            return bars.length === types && bars.every(b => b.value === b.max && b.max > 0)
                && rows.every(r => r.dataset.status === 'completed');
        }""",
        arg=len(ContentType),
        timeout=90_000,
    )
    assert await worker.wait() == 0

    assert await page.evaluate("window.__sameDocument") is True, "the page was reloaded"
    seen = set(await page.evaluate("[...window.__seen]"))
    assert "100%" in seen
    assert any(p not in ("0%", "100%") for p in seen), f"no bar was seen moving: {seen}"
    texts = await page.locator("#run-jobs .bar-text").all_inner_texts()
    assert all(t.endswith("100%") for t in texts), texts
    assert "completed" in await page.locator("#run-status").inner_text()
    assert await page.get_by_role("button", name=f"Stop run {run_id}").count() == 0
    run = await run_get(db, run_id)
    assert run is not None and str(run.status) == "completed"

    await screenshot_everywhere(page, base, screens, run_id)
    response = await page.goto(base + "/")
    assert response is not None
    overview = await response.text()
    assert "HubSpot requests per minute" in overview
    assert len(list(screens.glob("*.png"))) == 11


@SERVED
async def test_a_failed_job_is_retried_from_the_dead_letter_and_strangers_are_refused(
    sync: ProcessSync, spawn: Spawn, browser: Browser, screens: Path, tmp_path: Path
) -> None:
    db = sync.db
    portal = await sync.plant_portal(BROKEN)
    env = sync.env()
    failed_sync = await smuves(env, "sync", str(portal), "--types", "site_page,blog_post")
    assert failed_sync.code == 1, failed_sync.stdout + failed_sync.stderr
    # Nothing in flight: the site pages completed, the blog posts failed for good.
    assert await job_list_in_flight(db, portal, JobKind.FETCH) == []
    failed = [
        j
        for j in await job_list(db, portal_id=portal)
        if j.status is JobStatus.FAILED and j.content_type is ContentType.BLOG_POST
    ]
    assert len(failed) == 1
    job_id = failed[0].id

    base, link = await start_dashboard(spawn, env, tmp_path / "dashboard.log")
    page = await browser.new_page(viewport=DESKTOP)
    await sign_in(page, link)
    await page.goto(f"{base}/dead-letter")
    row = page.locator(f"#dead-{job_id}")
    assert "(403)" in await row.inner_text()
    assert "Grant the scope" in await row.inner_text()
    await page.screenshot(path=screens / "dead-letter-before.png", full_page=True)

    # A forged form (the right cookie, a wrong CSRF token) is refused and changes nothing.
    await page.evaluate("document.querySelector('#selection input[name=csrf]').value = 'forged'")
    await row.get_by_role("button", name=f"Retry job {job_id}").click()
    assert "CSRF" in await page.locator("main").inner_text()
    job = await job_get(db, job_id)
    assert job is not None and job.status is JobStatus.FAILED

    await page.goto(f"{base}/dead-letter")
    await page.locator(f"#dead-{job_id}").get_by_role("button", name=f"Retry job {job_id}").click()
    assert await page.get_by_role("heading", name="Confirm: Retry 1 job(s)").is_visible()
    job = await job_get(db, job_id)
    assert job is not None and job.status is JobStatus.FAILED
    await page.screenshot(path=screens / "confirm-retry.png")
    await page.get_by_role("button", name="Retry 1 job(s)").click()
    await page.wait_for_url(re.compile(r"/dead-letter$"))
    assert (
        f"job {job_id} requeued (was failed): now pending"
        in await page.locator(".flash").first.inner_text()
    )
    await page.goto(f"{base}/runs/{failed[0].run_id}")
    assert await page.locator(f"#job-{job_id}").get_attribute("data-status") == "pending"
    assert "pending" in await page.locator(f"#job-{job_id}").inner_text()
    job = await job_get(db, job_id)
    assert job is not None and job.status is JobStatus.PENDING
    await page.goto(f"{base}/dead-letter")
    assert "Ada (browser test)" in await page.locator(".audit").inner_text()

    # Without the cookie: the pages send you to sign in, and the buttons do nothing.
    stranger = await browser.new_context()
    other = await stranger.new_page()
    await other.goto(f"{base}/dead-letter")
    assert other.url == f"{base}/login"
    assert "(403)" not in await other.content()
    refused = await stranger.request.post(
        f"{base}/dead-letter/retry",
        form={"only": str(job_id), "confirmed": "yes", "csrf": "x"},
    )
    assert refused.status == 401
    await stranger.close()


# -- the layout at a phone's width and on a wide screen, on planted rows -----------------------

LOGIN = "phone-layout-login-token"


@pytest.fixture
async def planted(settings: Settings, admin_pool: Pool) -> AsyncIterator[str]:
    """The dashboard app on this test's database, served on a local port; its base URL."""
    auth = DashboardAuth(login_token=LOGIN)
    async with serve_app(create_dashboard_app(settings, pool=admin_pool, auth=auth)) as base:
        yield base


@pytest.fixture
async def phone(browser: Browser, planted: str) -> AsyncIterator[Page]:
    """A page signed in to `planted` at a phone's width, closed (and its live updates with
    it) before the dashboard stops."""
    page = await browser.new_page(viewport=PHONE)
    try:
        await sign_in(page, f"{planted}/login?token={LOGIN}")
        yield page
    finally:
        await page.close()


async def page_width(page: Page) -> int:
    """How wide the page is laid out (wider than the viewport: it scrolls sideways)."""
    width: int = await page.evaluate("document.documentElement.scrollWidth")
    return width


async def page_height(page: Page) -> int:
    """How tall the whole page is."""
    height: int = await page.evaluate("document.documentElement.scrollHeight")
    return height


async def boxes(page: Page, selector: str) -> list[dict[str, float]]:
    """The bounding boxes of the elements `selector` finds, in page coordinates."""
    found: list[dict[str, float]] = await page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].map(e => {
            const r = e.getBoundingClientRect();
            return {left: r.left, right: r.right, top: r.top + scrollY,
                    bottom: r.bottom + scrollY, width: r.width, height: r.height};
        })""",
        selector,
    )
    return found


async def shoot(page: Page, screens: Path, name: str) -> None:
    """The whole page, at the width it has now, into `screens`."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    await page.screenshot(path=screens / f"{name}-{width}.png", full_page=True)


async def fits(page: Page) -> None:
    """The page is no wider than its window: nothing is reached by scrolling it sideways."""
    window = page.viewport_size
    assert window is not None
    width = await page_width(page)
    assert width <= window["width"], f"{page.url} is {width} px wide in {window['width']} px"


async def in_table_rows(page: Page, selector: str) -> None:
    """The rows `selector` finds are laid out as table rows: every cell starts at one height."""
    tops: list[list[float]] = await page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].map(
            row => [...row.children].map(cell => cell.getBoundingClientRect().top))""",
        selector,
    )
    assert tops and all(len(set(row)) == 1 for row in tops), tops


LONG_ERROR = (
    "HubSpotRetryableError: could not complete GET /cms/v3/pages/site-pages?limit=100&after="
    "MTAwMA%3D%3D: ConnectError: [Errno 111] Connection refused, after 3 attempts of the "
    "worker dashboard-test:4242, which resumes from the last saved page on the next one"
)


FAILURES = "section[aria-labelledby=failures-h] table"
# The Now and Stored columns of the portals' tables of types (the type is the row's header).
NOW_AND_STORED = "table.types tbody tr > :nth-child(4), table.types tbody tr > :nth-child(5)"


async def test_on_a_phone_the_overviews_failures_are_cards_whose_errors_read_in_lines(
    phone: Page, planted: str, factory: Factory, screens: Path
) -> None:
    run = await factory.run(status=RunStatus.FAILED)
    failed: dict[str, Any] = {
        "status": JobStatus.FAILED,
        "attempts": 3,
        "finished_at": datetime.now(UTC),
    }
    await factory.job(run, last_error=LONG_ERROR, **failed)
    page = phone
    await page.reload()
    one = await page_height(page)
    more = RECENT_FAILURES - 1
    for n, content_type in enumerate(list(ContentType)[1 : more + 1]):
        await factory.job(run, content_type=content_type, last_error=f"{LONG_ERROR} {n}", **failed)

    await page.reload()

    assert await page.locator(f"{FAILURES} tbody tr").count() == RECENT_FAILURES
    await fits(page)
    # Each failure more adds well under half a screen (it was a column of one word a line).
    grown = (await page_height(page) - one) / more
    assert grown < PHONE["height"] / 2, f"each failure adds {grown:.0f} px"
    errors = await boxes(page, f"{FAILURES} td.error")
    assert all(e["width"] >= 0.75 * PHONE["width"] for e in errors), errors
    await shoot(page, screens, "overview")
    await page.set_viewport_size(WIDE)
    await fits(page)
    await in_table_rows(page, f"{FAILURES} tbody tr")
    await shoot(page, screens, "overview")


async def test_on_a_phone_every_column_of_the_portals_page_is_on_screen(
    phone: Page, planted: str, factory: Factory, screens: Path
) -> None:
    for n in range(3):
        portal = await factory.portal(name=f"Portal number {n} of a customer with a long name")
        done = await factory.run(portal, status=RunStatus.COMPLETED)
        await factory.job(done, status=JobStatus.COMPLETED, total=2, processed=2)
        await factory.content_item(done)
        live = await factory.run(portal, status=RunStatus.RUNNING)
        await factory.job(
            live, content_type=ContentType.BLOG_POST, status=JobStatus.RUNNING, total=900
        )
        await factory.schedule(portal)
    page = phone

    await page.goto(f"{planted}/portals")

    for width in (PHONE["width"], WIDE["width"]):
        await page.set_viewport_size(ViewportSize(width=width, height=PHONE["height"]))
        await fits(page)
        cells = await boxes(page, NOW_AND_STORED)
        assert len(cells) == 2 * 3 * len(ContentType)
        outside = [c for c in cells if c["left"] < 0 or c["right"] > width]
        assert not outside, f"at {width} px, {len(outside)} Now/Stored cells are off screen"
        assert await page.locator("table.types progress").count() == 3
        await shoot(page, screens, "portals")
    await in_table_rows(page, "table.types tbody tr")


async def test_on_a_phone_the_runs_are_one_card_a_row_with_labels_clear_of_values(
    phone: Page, planted: str, factory: Factory, screens: Path
) -> None:
    portal = await factory.portal(name="A customer whose portal has quite a long name")
    for status in (RunStatus.COMPLETED, RunStatus.RUNNING, RunStatus.PARTIALLY_FAILED) * 2:
        run = await factory.run(portal, status=status)
        await factory.job(run, status=JobStatus.COMPLETED, total=1200, processed=1200)
        await factory.job(
            run, content_type=ContentType.BLOG_POST, status=JobStatus.FAILED, total=40
        )
    page = phone

    await page.goto(f"{planted}/runs")

    await fits(page)
    cards = await boxes(page, "table.runs tbody tr")
    assert len(cards) == 6
    assert all(c["width"] >= 0.8 * PHONE["width"] for c in cards), cards
    assert all(a["bottom"] <= b["top"] for a, b in itertools.pairwise(cards))
    pairs: list[dict[str, Any]] = await page.evaluate(
        """() => [...document.querySelectorAll('table.runs tbody td')].map(cell => {
            const label = cell.querySelector(':scope > .cell-label');
            if (!label) return {text: cell.textContent, label: null};
            const value = document.createRange();
            value.setStartAfter(label);
            value.setEnd(cell, cell.childNodes.length);
            const box = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
            return {text: label.textContent, label: box(label.getBoundingClientRect()),
                    value: box(value.getBoundingClientRect())};
        })"""
    )
    assert len(pairs) == 6 * 8
    unlabelled = [p["text"] for p in pairs if p["label"] is None]
    assert not unlabelled, f"cells without a label: {unlabelled[:3]}"
    for pair in pairs:
        label, value = pair["label"], pair["value"]
        apart = (
            label["right"] <= value["left"]
            or label["bottom"] <= value["top"]
            or value["bottom"] <= label["top"]
        )
        assert apart, f"the label {pair['text']!r} overlaps its value: {label} {value}"
    await shoot(page, screens, "runs")
    await page.set_viewport_size(WIDE)
    await fits(page)
    await in_table_rows(page, "table.runs tbody tr")
    assert not await page.locator("table.runs .cell-label").first.is_visible()
    await shoot(page, screens, "runs")


REACH = (
    "HubSpotRetryableError: HubSpot could not be reached or failed; it is tried again while "
    "attempts remain"
)


async def test_a_runs_nine_failures_of_one_cause_are_one_row_and_its_cursors_fold_away(
    phone: Page, planted: str, factory: Factory, screens: Path
) -> None:
    run = await factory.run(status=RunStatus.FAILED)
    for content_type in ContentType:
        await factory.job(
            run,
            content_type=content_type,
            status=JobStatus.FAILED,
            attempts=3,
            processed=300,
            total=900,
            cursor="eyJhZnRlciI6ICIxNzM4MDAwMDAwMDAwIiwgInBhZ2UiOiA3fQ==" * 2,
            last_error=f"HubSpotRetryableError: could not complete GET /{content_type}: "
            "ConnectError",
            last_error_public=REACH,
        )
    page = phone

    await page.goto(f"{planted}/runs/{run.id}")

    for size in (PHONE, WIDE):
        await page.set_viewport_size(size)
        await fits(page)
        causes = page.locator("table.causes tbody tr")
        assert await causes.count() == 1
        text = await causes.inner_text()
        assert f"{len(ContentType)} types" in text and REACH in text
        assert all(str(t) in text for t in ContentType)
        assert await page.get_by_text(REACH).count() == 1
        cursors = page.locator("#run-jobs details.cursor")
        assert await cursors.count() == len(ContentType)
        assert await page.locator("#run-jobs details.cursor[open]").count() == 0
        assert not await cursors.locator("code").first.is_visible()
        assert await page.locator("#run-jobs th", has_text="Cursor").count() == 0
        await shoot(page, screens, "run")
    await in_table_rows(page, "table.jobs tbody tr")
    await cursors.first.locator("summary").click()
    assert await cursors.first.locator("code").is_visible()
    await fits(page)


@SERVED
async def test_the_overview_shows_a_dead_worker_readably_on_a_desktop_and_a_phone(
    sync: ProcessSync, spawn: Spawn, browser: Browser, screens: Path, tmp_path: Path
) -> None:
    db = sync.db
    portal = await sync.plant_portal(CLEAN)
    run = await sync.factory.run(portal)
    await sync.factory.job(run)
    seat = WorkerSeat(
        name="night-box-17.example.internal:48213",
        host="night-box-17.example.internal",
        pid=48213,
        kinds=(JobKind.EXPORT, JobKind.FETCH),
        concurrency=8,
        heartbeat_every=timedelta(seconds=40),
    )
    dead = await worker_register(db, seat, now=await db_now(db) - timedelta(minutes=25))
    await worker_heartbeat(
        db, dead, job_ids=[101, 102], now=await db_now(db) - timedelta(minutes=20)
    )
    base, link = await start_dashboard(spawn, sync.env(), tmp_path / "dashboard.log")
    page = await browser.new_page(viewport=WIDE)
    await sign_in(page, link)

    for name, size in (("1400", WIDE), ("390", PHONE)):
        await page.set_viewport_size(size)
        await page.goto(base + "/")
        row = page.locator(f"#worker-{dead.id}")
        assert await row.get_attribute("data-alive") == "no"
        text = await row.inner_text()
        assert "night-box-17.example.internal" in text and "48213" in text, text
        assert "dead" in text and "2: 101, 102" in text and "20 min" in text, text
        assert await page.get_by_text(NO_WORKER).first.is_visible()
        assert "No worker is running" in await page.locator("#workers").inner_text()
        await page.screenshot(path=screens / f"overview-dead-worker-{name}.png", full_page=True)
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= size["width"], f"the overview is {width} px wide at {name} px"
        box = await row.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size["width"]
