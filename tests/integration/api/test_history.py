"""Content history through the API: versions, one version's document, diffs, the changes feed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

from smuves_sync.api import history
from smuves_sync.db import Database
from smuves_sync.json_diff import TOO_LARGE, FieldChange, diff_documents
from smuves_sync.models import ContentType
from tests.integration.api.conftest import User, get_ok
from tests.integration.test_content_store import record
from tests.integration.test_content_versions import fetch
from tests.support.factories import Factory

PORTAL = 83
OBJECT = f"/v1/portals/{PORTAL}/content/blog_post/1"
LONG_BODY = "<p>" + "Old words. " * 20 + "</p><p>Same paragraph.</p>"
NEW_BODY = "<p>" + "New words. " * 20 + "</p><p>Same paragraph.</p>"
# Two bodies of about a megabyte, 50,000 paragraphs, every other one edited: difflib's matcher
# alone would take minutes over them.
BIG_BODY = "".join(f"<p>Paragraph {i:05}.</p>" for i in range(50_000))
BIG_EDIT = "".join(f"<p>Paragraph {i:05}{'!' * (i % 2)}.</p>" for i in range(50_000))
BIG_PORTAL = 85
BIG_OBJECT = f"/v1/portals/{BIG_PORTAL}/content/blog_post/1"


@pytest.fixture
async def runs(factory: Factory, worker_db: Database, alice: User) -> list[int]:
    """Alice's portal: post 1 created, edited (name and body), archived; post 2 created,
    then deleted; post 3 created by the last run."""
    await factory.portal(alice.id, portal_id=PORTAL)
    first = await fetch(factory, worker_db, PORTAL, [record("1", body=LONG_BODY), record("2")])
    second = await fetch(
        factory, worker_db, PORTAL, [record("1", name="Edited", body=NEW_BODY)], gone=("2",)
    )
    third = await fetch(
        factory,
        worker_db,
        PORTAL,
        [record("1", name="Edited", body=NEW_BODY, archived=True), record("3")],
    )
    return [first, second, third]


async def _get(client: httpx.AsyncClient, user: User, url: str) -> httpx.Response:
    return await client.get(url, headers=user.headers)


async def test_an_objects_versions_page_by_number(
    client: httpx.AsyncClient, runs: list[int], alice: User
) -> None:
    body = await get_ok(client, alice, f"{OBJECT}/versions?limit=2")
    assert [(v["version"], v["event"]) for v in body["items"]] == [(1, "created"), (2, "updated")]
    assert body["items"][0]["seen_from_run"] == runs[0]
    assert body["items"][0]["seen_until_run"] == runs[1]
    assert body["items"][0]["current"] is False and body["next"] == 2
    rest = (await _get(client, alice, f"{OBJECT}/versions?after=2")).json()
    assert [(v["version"], v["event"], v["current"]) for v in rest["items"]] == [
        (3, "archived", True)
    ]
    assert rest["next"] is None


async def test_a_version_comes_with_its_document(
    client: httpx.AsyncClient, runs: list[int], alice: User
) -> None:
    body = await get_ok(client, alice, f"{OBJECT}/versions/1")
    assert body["document"] == record("1", body=LONG_BODY).raw
    assert (body["version"], body["event"], body["content_type"]) == (1, "created", "blog_post")
    missing = await _get(client, alice, f"{OBJECT}/versions/9")
    assert (missing.status_code, missing.json()["code"]) == (404, "NOT_FOUND")


async def test_a_diff_names_each_changed_field_and_diffs_long_text(
    client: httpx.AsyncClient, runs: list[int], alice: User
) -> None:
    body = await get_ok(client, alice, f"{OBJECT}/diff?from=1&to=2")
    assert (body["from"]["version"], body["to"]["version"]) == (1, 2)
    changes = {c["path"]: c for c in body["changes"]}
    assert set(changes) == {"$.name", "$.body"}
    assert (changes["$.name"]["old"], changes["$.name"]["new"]) == ("Post 1", "Edited")
    assert changes["$.name"]["text_diff"] is None
    text = changes["$.body"]["text_diff"]
    assert text[:2] == ["--- version 1", "+++ version 2"]
    assert f"-{LONG_BODY.split('</p>')[0]}</p>" in text
    assert "<p>Same paragraph.</p>" not in [line[1:] for line in text if line[:1] in "+-"]

    latest = (await _get(client, alice, f"{OBJECT}/diff")).json()
    assert (latest["from"]["version"], latest["to"]["version"]) == (2, 3)
    assert [c["path"] for c in latest["changes"]] == ["$.archived"]
    created = (await _get(client, alice, f"{OBJECT}/diff?to=1")).json()
    assert created["from"] is None
    assert {c["kind"] for c in created["changes"]} == {"added"}
    assert (await _get(client, alice, f"{OBJECT}/diff?from=7")).status_code == 404


async def test_the_changes_of_a_portal_page_by_cursor_and_filter_by_run(
    client: httpx.AsyncClient, runs: list[int], alice: User
) -> None:
    walked: list[tuple[int, str, str]] = []
    url = f"/v1/portals/{PORTAL}/changes?limit=2"
    while True:
        body = (await _get(client, alice, url)).json()
        walked.extend((c["run_id"], c["hubspot_id"], c["event"]) for c in body["items"])
        if body["next"] is None:
            break
        url = f"/v1/portals/{PORTAL}/changes?limit=2&after={body['next']}"
    assert sorted(walked) == sorted(
        [
            (runs[0], "1", "created"),
            (runs[0], "2", "created"),
            (runs[1], "1", "updated"),
            (runs[1], "2", "deleted"),
            (runs[2], "1", "archived"),
            (runs[2], "3", "created"),
        ]
    )
    last = await _get(client, alice, f"/v1/portals/{PORTAL}/changes?since_run={runs[2]}")
    assert [(c["hubspot_id"], c["event"], c["name"]) for c in last.json()["items"]] == [
        ("1", "archived", "Edited"),
        ("3", "created", "Post 3"),
    ]
    typed = await _get(client, alice, f"/v1/portals/{PORTAL}/changes?type=site_page")
    assert typed.json()["items"] == []
    future = await _get(client, alice, f"/v1/portals/{PORTAL}/changes?since=2999-01-01")
    assert future.json()["items"] == []
    bad = await _get(client, alice, f"/v1/portals/{PORTAL}/changes?after=nonsense")
    assert (bad.status_code, bad.json()["code"]) == (422, "INVALID_INPUT")


async def test_history_of_another_users_portal_is_not_found(
    client: httpx.AsyncClient, runs: list[int], bob: User, factory: Factory
) -> None:
    await factory.portal(bob.id, portal_id=84)
    for url in (
        f"{OBJECT}/versions",
        f"{OBJECT}/versions/1",
        f"{OBJECT}/diff",
        f"/v1/portals/{PORTAL}/changes",
    ):
        response = await _get(client, bob, url)
        assert response.status_code == 404, url
        assert response.json() == {"code": "NOT_FOUND", "message": f"portal {PORTAL} not found"}
    unknown = await _get(client, bob, f"/v1/portals/84/content/{ContentType.BLOG_POST}/1/versions")
    assert unknown.json()["message"] == "blog_post 1 of portal 84 not found"


@pytest.fixture
async def big_versions(factory: Factory, worker_db: Database, alice: User) -> None:
    """Alice's post 1, created with a megabyte body, then renamed and edited throughout."""
    await factory.portal(alice.id, portal_id=BIG_PORTAL)
    await fetch(factory, worker_db, BIG_PORTAL, [record("1", body=BIG_BODY)])
    await fetch(factory, worker_db, BIG_PORTAL, [record("1", name="Edited", body=BIG_EDIT)])


class HeldDiff:
    """`diff_documents`, held until released once it has begun: what else the API serves
    meanwhile shows that the diff does not hold the event loop."""

    def __init__(self) -> None:
        self.began = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> list[FieldChange]:
        self.began.set()
        self.release.wait(timeout=60)  # never reached in a passing test; stops a hung one
        return diff_documents(*args, **kwargs)


async def test_a_diff_of_megabyte_bodies_leaves_the_api_serving_and_lists_the_fields(
    client: httpx.AsyncClient, big_versions: None, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldDiff()
    monkeypatch.setattr(history, "diff_documents", held)
    answered: list[str] = []

    async def get(url: str) -> httpx.Response:
        response = await _get(client, alice, url)
        answered.append(url)
        return response

    diffing = asyncio.create_task(get(f"{BIG_OBJECT}/diff"))
    await asyncio.to_thread(held.began.wait, 60)
    versions = await get(f"{BIG_OBJECT}/versions")
    held.release.set()
    diff = await diffing

    assert answered == [f"{BIG_OBJECT}/versions", f"{BIG_OBJECT}/diff"]
    assert versions.status_code == 200 and len(versions.json()["items"]) == 2
    assert diff.status_code == 200, diff.text
    changes = {c["path"]: c for c in diff.json()["changes"]}
    assert set(changes) == {"$.name", "$.body"}
    assert (changes["$.body"]["old"], changes["$.body"]["new"]) == (BIG_BODY, BIG_EDIT)
    [line] = changes["$.body"]["text_diff"]
    assert line.startswith(
        f"{TOO_LARGE}: {len(BIG_BODY):,} and {len(BIG_EDIT):,} characters (the line diffs"
    )


async def test_a_diff_past_its_time_limit_answers_503(
    client: httpx.AsyncClient, big_versions: None, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldDiff()
    monkeypatch.setattr(history, "diff_documents", held)
    monkeypatch.setattr(history, "DIFF_TIME_LIMIT_SECONDS", 0.01)
    try:
        response = await _get(client, alice, f"{BIG_OBJECT}/diff")
    finally:
        held.release.set()
    assert response.status_code == 503
    assert response.json() == {
        "code": "DIFF_TIMEOUT",
        "message": "the diff took longer than 0.01 s; retry shortly",
    }
