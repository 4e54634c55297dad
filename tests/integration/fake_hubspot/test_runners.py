"""The thread and subprocess runners, the launcher's flags, and a 50,000-object portal."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    Churn,
    FakeHubSpot,
    FaultKind,
    FaultRule,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
    serve_in_thread,
)
from smuves_sync.testing.fake_hubspot.cli import argument_parser, parse_portal, setup_from_args
from smuves_sync.testing.fake_hubspot.runner import LAUNCHER
from smuves_sync.testing.fake_hubspot.spec import decode_setup, encode_setup, fault_from_text
from tests.integration.fake_hubspot.conftest import SMALL, TOKEN, client, fetch_all


async def test_the_thread_runner_stops_cleanly() -> None:
    with serve_in_thread(FakeHubSpot([SMALL])) as base_url:
        async with client(base_url) as http:
            assert (await http.get("/cms/v3/blogs/posts")).status_code == 200
    async with client(base_url) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get("/cms/v3/blogs/posts")


async def test_the_subprocess_runner_serves_and_obeys_the_admin_calls() -> None:
    config = ServerConfig(ten_second_limit=50, daily_limit=None)
    with serve_in_subprocess([SMALL], config) as fake:
        async with client(fake.base_url) as http:
            served = await fetch_all(http, "/cms/v3/pages/landing-pages", limit=10)
            truth = fake.ground_truth(SMALL.portal_id, ContentType.LANDING_PAGE, archived=False)
            assert [o["id"] for o in served] == [item.hubspot_id for item in truth]
            local = FakeHubSpot([SMALL], config).ground_truth(SMALL.portal_id, "landing_page")
            assert fake.ground_truth(SMALL.portal_id, "landing_page") == local
            assert fake.advance(SMALL.portal_id, Churn(deleted=0.5)) == 1
            assert fake.version(SMALL.portal_id) == 1
            after = await fetch_all(http, "/cms/v3/pages/landing-pages", limit=10)
            assert len(after) < len(served)
            fake.set_faults((FaultRule(FaultKind.STATUS, status=502, share=1.0),))
            assert (await http.get("/cms/v3/blogs/posts")).status_code == 502
            stats = fake.stats(SMALL.portal_id)
            assert stats.requests == 4 and stats.by_status == {200: 3, 502: 1}
            fake.revoke_token(TOKEN)
            assert (await http.get("/cms/v3/blogs/posts")).status_code == 401
        process = fake.process
    assert process.returncode is not None  # stopped by the context manager


def test_the_launcher_documents_its_flags() -> None:
    result = subprocess.run(
        [sys.executable, str(LAUNCHER), "--help"], capture_output=True, text=True, check=True
    )
    for flag in ("--port", "--portal", "--latency-ms", "--ten-second-limit", "--daily-limit",
                 "--fault", "--seed", "--config-json"):  # fmt: skip
        assert flag in result.stdout


def test_flags_become_portals_and_config() -> None:
    args = argument_parser().parse_args(
        [
            "--portal", "7:tok-a:10,0,5,2,30",
            "--portal", "8:tok-b:1,2,3,0,0:99",
            "--latency-ms", "50", "--ten-second-limit", "100", "--daily-limit", "0",
            "--fault", "kind=status,status=503,type=blog_post,share=0.5",
            "--fault", "kind=rate_limit,on=3+4,policy=SECONDLY",
            "--seed", "4",
        ]
    )  # fmt: skip
    portals, config = setup_from_args(args)
    assert portals[0] == PortalSpec(7, "tok-a", 4, 10, 0, 5, 2, 30)
    assert portals[1].seed == 99 and portals[1].landing_pages == 2
    assert (config.latency_ms, config.ten_second_limit, config.daily_limit) == (50, 100, None)
    assert config.faults == (
        FaultRule(FaultKind.STATUS, share=0.5, content_type=ContentType.BLOG_POST, status=503),
        FaultRule(FaultKind.RATE_LIMIT, on_requests=(3, 4), policy="SECONDLY"),
    )
    assert decode_setup(encode_setup(portals, config)) == (portals, config)


def test_a_portal_flag_may_count_the_blog_types_and_redirects() -> None:
    spec = parse_portal("9:tok:1,2,3,0,0,8,40,60,4:5", default_seed=0, archived_share=0.1)
    assert spec == PortalSpec(
        9, "tok", 5, 1, 2, 3, 0, 0, 0.1, blog_authors=8, blog_tags=40, url_redirects=60, blogs=4
    )
    assert decode_setup(encode_setup((spec,), ServerConfig()))[0] == (spec,)


@pytest.mark.parametrize(
    "bad",
    [
        "7:tok",
        "7:tok:1,2,3",
        "x:tok:1,2,3,4,5",
        "7:tok:1,2,3,4,5:1:2",
        "-1:t:1,1,1,1,1",
        "7:tok:1,2,3,4,5,6",
        "7:tok:1,2,3,4,5,6,7,8,-1",
    ],
)
def test_bad_portal_flags_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_portal(bad, default_seed=0, archived_share=0.05)


@pytest.mark.parametrize("bad", ["kind=boom", "kind=status,share=2", "status=500", "kind"])
def test_bad_fault_flags_are_refused(bad: str) -> None:
    with pytest.raises((ValueError, KeyError)):
        fault_from_text(bad)


@pytest.mark.slow
async def test_a_50000_object_portal_starts_small_and_serves_page_by_page() -> None:
    spec = PortalSpec(portal_id=9, token="big", seed=3, site_pages=50_000, archived_share=0.04)
    config = ServerConfig(ten_second_limit=None, daily_limit=None)
    tracemalloc.start()
    fake = FakeHubSpot([spec], config)
    _, peak_at_start = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak_at_start < 1_000_000  # nothing is generated before it is asked for
    truth = fake.ground_truth(9, ContentType.SITE_PAGE, archived=False)
    life = fake.portal(9).collection(ContentType.SITE_PAGE).life
    assert life.memory_bytes() < 1_000_000  # a few bytes per object
    # A separate process, so the server and this client do not share one interpreter lock.
    with serve_in_subprocess([spec], config) as server:
        async with client(server.base_url, "big") as http:
            served = await fetch_all(http, "/cms/v3/pages/site-pages", limit=100)
        assert server.stats(9).requests == 480
    assert len(served) == 48_000
    assert [o["id"] for o in served] == [item.hubspot_id for item in truth]


def test_the_launcher_serves_from_flags_and_steps_a_running_fake() -> None:
    command = [sys.executable, str(LAUNCHER), "--portal", "3:tok:20,0,5,1,10"]
    server = subprocess.Popen(
        [*command, "--start-version", "2", "--latency-ms", "1"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        stepped = subprocess.run(
            [sys.executable, str(LAUNCHER), "--advance", "3", "--url", base_url,
             "--churn", "0.5,0,0,0"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert stepped.stdout.strip() == "3"
        version = httpx.get(f"{base_url}/_fake/portals/3").json()["version"]
        posts = httpx.get(f"{base_url}/cms/v3/blogs/posts", headers={"Authorization": "Bearer tok"})
    finally:
        server.terminate()
        server.wait(10)
        if server.stdout is not None:
            server.stdout.close()
    assert version == 3
    assert posts.status_code == 200 and posts.headers["X-HubSpot-RateLimit-Max"] == "190"
    reference = FakeHubSpot([parse_portal("3:tok:20,0,5,1,10", 0, 0.05)])
    for _ in range(2):
        reference.advance(3)
    reference.advance(3, Churn(0.5, 0, 0, 0))
    expected = [item.hubspot_id for item in reference.ground_truth(3, "blog_post", archived=False)]
    assert [obj["id"] for obj in posts.json()["results"]] == expected
