"""Write faults: answers lost after a commit, 429s before one, refused inputs, refused batches,
and people editing an object between a client's read and its write."""

from __future__ import annotations

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import FakeHubSpot, ServerConfig, WriteFault, WriteFaultKind
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import validate
from tests.integration.fake_hubspot.writes_support import (
    PAGES_V3,
    PORTAL,
    POSTS,
    SITE,
    TABLES,
    live_ids,
    table_rows,
)

K = WriteFaultKind


def _batch(ids: list[str], title: str) -> dict[str, object]:
    return {"inputs": [{"id": i, "htmlTitle": f"{title} {i}"} for i in ids]}


async def _titles(http: httpx.AsyncClient, ids: list[str]) -> list[str]:
    body = (await http.post(f"{SITE}/batch/read", json={"inputs": ids})).json()
    by_id = {page["id"]: page["htmlTitle"] for page in body["results"]}
    return [by_id[i] for i in ids]


@pytest.mark.parametrize(
    ("rule", "status"),
    [
        (WriteFault(K.RATE_LIMIT, on_requests=(1,)), 429),
        (WriteFault(K.RATE_LIMIT, policy="SECONDLY", on_requests=(1,)), 429),
        (WriteFault(K.STATUS, status=503, on_requests=(1,)), 503),
    ],
)
async def test_a_fault_before_processing_commits_nothing(
    rule: WriteFault, status: int, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    fake.set_write_faults((rule,))
    ids = live_ids(fake, "site_page", 3)
    async with client(serve(fake)) as http:
        before = await _titles(http, ids)
        refused = await http.post(f"{SITE}/batch/update", json=_batch(ids, "New"))
        unchanged = await _titles(http, ids)
        accepted = await http.post(f"{SITE}/batch/update", json=_batch(ids, "New"))
        changed = await _titles(http, ids)
    assert refused.status_code == status
    validate(PAGES_V3, SITE + "/batch/update", status, refused.json(), "post")
    if status == 429:
        assert refused.json()["policyName"] == rule.policy
        assert "X-HubSpot-RateLimit-Remaining" in refused.headers
    assert unchanged == before
    assert accepted.status_code == 200
    assert changed == [f"New {i}" for i in ids]
    assert fake.write_stats(PORTAL)[f"fault_{rule.kind}"] == 1


async def test_a_write_commits_and_then_the_answer_is_a_5xx(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    fake.set_write_faults((WriteFault(K.COMMIT_THEN_STATUS, status=502, on_requests=(1,)),))
    ids = live_ids(fake, "site_page", 3)
    async with client(serve(fake)) as http:
        response = await http.post(f"{SITE}/batch/update", json=_batch(ids, "Lost"))
        titles = await _titles(http, ids)
    assert response.status_code == 502
    assert titles == [f"Lost {i}" for i in ids]
    assert [entry["id"] for entry in fake.write_log(PORTAL)] == ids


async def test_a_write_commits_and_then_the_connection_drops(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    (page_id,) = live_ids(fake, "site_page")
    fake.set_write_faults((WriteFault(K.COMMIT_THEN_DROP, object_id=page_id),))
    async with client(serve(fake)) as http:
        with pytest.raises(httpx.TransportError):
            await http.patch(f"{SITE}/{page_id}", json={"htmlTitle": "Committed"})
        (title,) = await _titles(http, [page_id])
    assert title == "Committed"
    assert fake.write_stats(PORTAL)["fault_commit_then_drop"] == 1


async def test_one_named_input_is_refused_and_the_others_commit(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "site_page", 4)
    fake.set_write_faults((WriteFault(K.REFUSE_INPUT, object_id=ids[2]),))
    async with client(serve(fake)) as http:
        before = await _titles(http, ids)
        response = await http.post(f"{SITE}/batch/update", json=_batch(ids, "T"))
        single = await http.patch(f"{SITE}/{ids[2]}", json={"htmlTitle": "Alone"})
        after = await _titles(http, ids)
    assert response.status_code == 207
    validate(PAGES_V3, SITE + "/batch/update", 207, response.json(), "post")
    (error,) = response.json()["errors"]
    assert error["context"]["ids"] == [ids[2]]
    assert single.status_code == 400
    assert after == [f"T {ids[0]}", f"T {ids[1]}", before[2], f"T {ids[3]}"]


async def test_a_batch_holding_a_bad_input_is_refused_whole_and_splitting_finds_it(
    serve: Serve,
) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "site_page", 8)
    bad = ids[5]
    fake.set_write_faults((WriteFault(K.REJECT_BATCH, object_id=bad),))
    refused: list[list[str]] = []
    async with client(serve(fake)) as http:
        pending = [ids]
        while pending:
            part = pending.pop()
            response = await http.post(f"{SITE}/batch/update", json=_batch(part, "S"))
            if response.status_code == 400:
                refused.append(part)
                if len(part) > 1:
                    pending += [part[: len(part) // 2], part[len(part) // 2 :]]
            else:
                assert response.status_code == 200
        titles = await _titles(http, ids)
    assert refused[-1] == [bad]
    assert all(bad in part for part in refused)
    assert titles[5] != f"S {bad}"
    assert [t for i, t in enumerate(titles) if i != 5] == [f"S {i}" for i in ids if i != bad]


async def test_a_person_edits_an_object_right_after_a_client_reads_it(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "site_page", 3)
    rule = WriteFault(
        K.EDIT_AFTER_READ, object_id=ids[1], field="htmlTitle", value="Edited by Robin"
    )
    fake.set_write_faults((rule,))
    async with client(serve(fake)) as http:
        read = await _titles(http, ids)
        now = (await http.get(f"{SITE}/{ids[1]}")).json()
        again = await _titles(http, ids)
        revisions = (await http.get(f"{SITE}/{ids[1]}/revisions")).json()["results"]
    assert read[1] != "Edited by Robin"  # the read saw the object before the edit
    assert now["htmlTitle"] == again[1] == "Edited by Robin"
    assert revisions[0]["user"]["fullName"] == "Robin Haas"
    # One edit per rule and object, however often it is read afterwards.
    assert [e["op"] for e in fake.write_log(PORTAL)] == ["person"]


async def test_people_edit_a_seeded_share_of_the_objects_read_once_each(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    ids = live_ids(fake, "blog_post", 20)
    fake.set_write_faults(
        (WriteFault(K.EDIT_AFTER_READ, content_type=ContentType.BLOG_POST, object_share=0.3),)
    )
    async with client(serve(fake)) as http:
        first = (await http.post(f"{POSTS}/batch/read", json={"inputs": ids})).json()["results"]
        second = (await http.post(f"{POSTS}/batch/read", json={"inputs": ids})).json()["results"]
    edited = [e["id"] for e in fake.write_log(PORTAL)]
    assert 0 < len(edited) < len(ids) and len(set(edited)) == len(edited)
    changed = [a["id"] for a, b in zip(first, second, strict=True) if a != b]
    assert sorted(changed) == sorted(edited)
    by_id = {post["id"]: post for post in second}
    assert all(by_id[i]["headHtml"].endswith("(edited)") for i in edited)


async def test_a_person_edits_a_tables_draft_after_a_row_read(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    table, (row,) = table_rows(fake, 1)
    rule = WriteFault(
        K.EDIT_AFTER_READ, object_id=f"{table}:{row}", field="values.title", draft=True
    )
    fake.set_write_faults((rule,))
    async with client(serve(fake)) as http:
        read = await http.post(f"{TABLES}/{table}/rows/batch/read", json={"inputs": [row]})
        published = (await http.get(f"{TABLES}/{table}/rows/{row}")).json()
        draft = (await http.get(f"{TABLES}/{table}/rows/{row}/draft")).json()
    assert read.json()["results"] == [published]
    assert draft["values"]["title"] == published["values"]["title"] + " (edited)"
    assert fake.unpublished_rows(PORTAL, table) == [f"{table}:{row}"]


def test_write_faults_are_checked() -> None:
    with pytest.raises(ValueError, match="object_id"):
        WriteFault(K.REFUSE_INPUT)
    with pytest.raises(ValueError, match="share"):
        WriteFault(K.COMMIT_THEN_STATUS, share=1.5)
    with pytest.raises(ValueError, match="unknown"):
        WriteFault.from_json({"kind": "status", "colour": "red"})
    with pytest.raises(ValueError, match="field"):
        WriteFault(K.EDIT_AFTER_READ, content_type=ContentType.HUBDB_ROW)
    rule = WriteFault(K.EDIT_AFTER_READ, content_type=ContentType.HUBDB_ROW, field="values.x")
    assert WriteFault.from_json(rule.as_json()) == rule


async def test_writes_spend_the_portals_request_budget(serve: Serve) -> None:
    limited = FakeHubSpot([SMALL], ServerConfig(ten_second_limit=2, send_retry_after=True))
    (page_id,) = live_ids(limited, "site_page")
    async with client(serve(limited)) as http:
        answers = [
            await http.patch(f"{SITE}/{page_id}", json={"htmlTitle": f"T{n}"}) for n in range(3)
        ]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].json()["policyName"] == "TEN_SECONDLY_ROLLING"
    assert "Retry-After" in answers[2].headers
    assert [e["keys"] for e in limited.write_log(PORTAL)] == [["htmlTitle"], ["htmlTitle"]]
