"""The dashboard in a real browser: Debian's chromium through Playwright, against `smuves
dashboard`, `smuves worker` and the fake HubSpot, each a subprocess, and a real Postgres.

Playwright's own browser download is not used: the tests launch the system's chromium
(`make browser` installs it). Without it they skip on a workstation and fail in CI
(CI=true), so a CI run never passes without having driven a browser. Every page is
screenshot at 1280 px and at a phone's width into the test's directory (tmp_path/screens).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from smuves_sync.db.jobs import job_get, job_list, job_list_in_flight
from smuves_sync.db.runs import run_get
from smuves_sync.db.workers import NO_WORKER, WorkerSeat, worker_heartbeat, worker_register
from smuves_sync.models import ContentType, JobKind, JobStatus
from smuves_sync.testing.fake_hubspot import FaultKind, FaultRule, ServerConfig
from tests.acceptance.conftest import ProcessSync, Spawn
from tests.support import TOKEN, db_now, eventually, fake_portal, smuves

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
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WIDE = {"width": 1400, "height": 900}


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
    overview = await (await page.goto(base + "/")).text()  # type: ignore[union-attr]
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
    assert (await job_get(db, job_id)).status is JobStatus.FAILED  # type: ignore[union-attr]

    await page.goto(f"{base}/dead-letter")
    await page.locator(f"#dead-{job_id}").get_by_role("button", name=f"Retry job {job_id}").click()
    assert await page.get_by_role("heading", name="Confirm: Retry 1 job(s)").is_visible()
    assert (await job_get(db, job_id)).status is JobStatus.FAILED  # type: ignore[union-attr]
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
    assert (await job_get(db, job_id)).status is JobStatus.PENDING  # type: ignore[union-attr]
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
