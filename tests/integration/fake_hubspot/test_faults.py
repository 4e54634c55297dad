"""Injected faults: reproducible shares and schedules, per content type, every kind."""

from __future__ import annotations

import json

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeHubSpot, FaultKind, FaultRule, ServerConfig
from smuves_sync.testing.fake_hubspot.faults import FaultPlan
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client

POSTS = "/cms/v3/blogs/posts"
PAGES = "/cms/v3/pages/site-pages"


def _config(*faults: FaultRule) -> ServerConfig:
    return ServerConfig(ten_second_limit=None, daily_limit=None, faults=faults)


def _firing(plan: FaultPlan, count: int) -> list[int]:
    return [n for n in range(1, count + 1) if plan.decide(1, ContentType.SITE_PAGE) is not None]


def test_shares_are_reproducible_under_a_seed() -> None:
    rule = FaultRule(FaultKind.STATUS, share=0.25)
    first = _firing(FaultPlan((rule,), seed=5), 400)
    assert first == _firing(FaultPlan((rule,), seed=5), 400)
    assert first != _firing(FaultPlan((rule,), seed=6), 400)
    assert 40 < len(first) < 160


def test_schedules_fire_on_exactly_their_requests() -> None:
    rules = (
        FaultRule(FaultKind.STATUS, on_requests=(2, 5), content_type=ContentType.SITE_PAGE),
        FaultRule(FaultKind.SLOW, on_requests=(1,), portal_id=99),
    )
    plan = FaultPlan(rules, seed=0)
    assert plan.decide(1, ContentType.BLOG_POST) is None  # matches no rule, counts for none
    assert _firing(plan, 6) == [2, 5]


async def test_a_type_that_always_fails(serve: Serve) -> None:
    rule = FaultRule(FaultKind.STATUS, status=503, share=1.0, content_type=ContentType.BLOG_POST)
    fake = FakeHubSpot([SMALL], _config(rule))
    async with client(serve(fake)) as http:
        posts = [(await http.get(POSTS)).status_code for _ in range(3)]
        pages = [(await http.get(PAGES)).status_code for _ in range(3)]
    assert (posts, pages) == ([503] * 3, [200] * 3)
    stats = fake.stats(SMALL.portal_id)
    assert stats.faults_injected == 3 and stats.by_status == {503: 3, 200: 3}


async def test_malformed_pages(serve: Serve) -> None:
    kinds = [
        FaultKind.NOT_JSON,
        FaultKind.TRUNCATED,
        FaultKind.MISSING_RESULTS,
        FaultKind.WRONG_TYPES,
        FaultKind.SLOW,
    ]
    rules = tuple(
        FaultRule(kind, on_requests=(n,), content_type=ContentType.SITE_PAGE, delay_ms=1)
        for n, kind in enumerate(kinds, start=1)
    )
    fake = FakeHubSpot([SMALL], _config(*rules))
    async with client(serve(fake)) as http:
        answers = [await http.get(PAGES) for _ in kinds]
    not_json, truncated, missing, wrong, slow = answers
    assert all(answer.status_code == 200 for answer in answers)
    assert not_json.headers["content-type"].startswith("text/html")
    for broken in (not_json, truncated):
        with pytest.raises(json.JSONDecodeError):
            broken.json()
    assert "results" not in missing.json() and missing.json()["total"] == 24
    assert isinstance(wrong.json()["total"], str) and isinstance(wrong.json()["results"], str)
    assert len(slow.json()["results"]) == 24
    assert fake.stats(SMALL.portal_id).faults_injected == 5


async def test_a_repeating_cursor(serve: Serve) -> None:
    rules = (
        FaultRule(FaultKind.REPEAT_CURSOR, on_requests=(2,), content_type=ContentType.SITE_PAGE),
        FaultRule(FaultKind.REPEAT_CURSOR, on_requests=(2,), content_type=ContentType.HUBDB_ROW),
    )
    fake = FakeHubSpot([SMALL], _config(*rules))
    table = fake.ground_truth(SMALL.portal_id, "hubdb_table", archived=False)[0].hubspot_id
    rows = f"/cms/v3/hubdb/tables/{table}/rows"
    async with client(serve(fake)) as http:
        first = (await http.get(PAGES, params={"limit": 5})).json()
        cursor = first["paging"]["next"]["after"]
        second = (await http.get(PAGES, params={"limit": 5, "after": cursor})).json()
        await http.get(rows, params={"limit": 5, "offset": 0})
        repeated = (await http.get(rows, params={"limit": 5, "offset": 5})).json()
    assert second["paging"]["next"]["after"] == cursor
    assert repeated["paging"]["next"]["offset"] == 5


async def test_injected_429s_and_runtime_fault_changes(serve: Serve) -> None:
    rule = FaultRule(
        FaultKind.RATE_LIMIT, on_requests=(1,), policy="SECONDLY", retry_after_s=2, share=0.0
    )
    fake = FakeHubSpot([SMALL], _config(rule))
    base_url = serve(fake)
    async with client(base_url) as http, httpx.AsyncClient(base_url=base_url) as admin:
        limited = await http.get(POSTS)
        fine = await http.get(POSTS)
        down = {"kind": "status", "status": 500, "share": 1, "content_type": "site_page"}
        assert (await admin.put("/_fake/faults", json={"faults": [down]})).status_code == 200
        failing = await http.get(PAGES)
        assert (
            await admin.put("/_fake/faults", json={"faults": [{"kind": "x"}]})
        ).status_code == 400
    assert (limited.status_code, fine.status_code, failing.status_code) == (429, 200, 500)
    assert limited.json()["policyName"] == "SECONDLY" and limited.headers["Retry-After"] == "2"
    stats = fake.stats(SMALL.portal_id)
    assert stats.status_429 == 1 and stats.limited_secondly == 0  # injected, not the limiter's
