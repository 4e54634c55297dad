"""HubDB writes go to the table's draft; publishing copies the draft to the published table."""

from __future__ import annotations

import pytest

from smuves_sync.testing.fake_hubspot import FakeHubSpot
from tests.integration.fake_hubspot.conftest import SMALL, Serve, client
from tests.integration.fake_hubspot.openapi import validate, validate_request
from tests.integration.fake_hubspot.writes_support import HUBDB_V3, PORTAL, TABLES, table_rows

T = TABLES + "/{tableIdOrName}"
DATED = "/cms/hubdb/2026-03/tables"


@pytest.mark.parametrize("base", [TABLES, DATED])
async def test_row_edits_stay_in_the_draft_until_the_table_is_published(
    base: str, serve: Serve
) -> None:
    fake = FakeHubSpot([SMALL])
    table, (row, other) = table_rows(fake, 2)
    rows = f"{base}/{table}/rows"
    body = {"values": {"title": "Edited title"}, "path": "edited-path"}
    validate_request(HUBDB_V3, T + "/rows/{rowId}/draft", body, "patch")
    async with client(serve(fake)) as http:
        published = (await http.get(f"{rows}/{row}")).json()
        patched = await http.patch(f"{rows}/{row}/draft", json=body)
        still = (await http.get(f"{rows}/{row}")).json()
        listed = (await http.get(rows, params={"limit": 1000})).json()["results"]
        batch = (await http.post(f"{rows}/batch/read", json={"inputs": [row]})).json()
        draft = await http.post(f"{rows}/draft/batch/read", json={"inputs": [row, other, "9"]})
        draft_table = (await http.get(f"{base}/{table}/draft")).json()
        unpublished = fake.unpublished_rows(PORTAL, table)
        publish = await http.post(f"{base}/{table}/draft/publish")
        after = (await http.get(f"{rows}/{row}")).json()
    assert patched.status_code == 200, patched.text
    validate(HUBDB_V3, T + "/rows/{rowId}/draft", 200, patched.json(), "patch")
    edited = patched.json()
    assert edited["values"] == {**published["values"], "title": "Edited title"}
    assert edited["path"] == "edited-path" and edited["updatedAt"] > published["updatedAt"]
    # The listing, the row and the batch read serve the published table.
    assert still == published
    assert next(r for r in listed if r["id"] == row) == published
    assert batch["results"] == [published]
    assert draft.status_code == 207
    validate(HUBDB_V3, T + "/rows/draft/batch/read", 207, draft.json(), "post")
    assert [r["id"] for r in draft.json()["results"]] == [row, other]
    assert draft.json()["results"][0] == edited
    assert draft.json()["errors"][0]["context"]["ids"] == ["9"]
    assert unpublished == [f"{table}:{row}"]
    assert draft_table["updatedAt"] > draft_table["publishedAt"]
    assert publish.status_code == 200
    validate(HUBDB_V3, T + "/draft/publish", 200, publish.json(), "post")
    assert {**after, "publishedAt": None} == {**edited, "publishedAt": None}
    assert after["publishedAt"] >= edited["updatedAt"]
    assert fake.unpublished_rows(PORTAL, table) == []


async def test_a_publish_also_publishes_a_colleagues_draft_edits(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    table, (ours, theirs) = table_rows(fake, 2)
    fake.person_edit(PORTAL, "hubdb_row", f"{table}:{theirs}", {"name": "wip"}, draft=True)
    async with client(serve(fake)) as http:
        await http.patch(f"{TABLES}/{table}/rows/{ours}/draft", json={"name": "ours"})
        assert fake.unpublished_rows(PORTAL, table) == [f"{table}:{ours}", f"{table}:{theirs}"]
        await http.post(f"{TABLES}/{table}/draft/publish")
        names = [
            (await http.get(f"{TABLES}/{table}/rows/{row}")).json()["name"]
            for row in (ours, theirs)
        ]
    assert names == ["ours", "wip"]


async def test_a_row_batch_update_names_the_rows_it_refused(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    table, (first, second, third) = table_rows(fake, 3)
    columns = {c.name: c for c in fake.portal(PORTAL).columns(0)}
    select = next((c for c in columns.values() if c.type == "SELECT"), None)
    values: dict[str, object] = {"title": "Batch title"}
    if select is not None:
        values[select.name] = {"name": select.options[-1]}
    body = {
        "inputs": [
            {"id": first, "values": values},
            {"id": second, "values": {"no_such_column": "x"}},
            {"id": third, "values": {"title": 5}},
            {"id": "12", "values": {"title": "nobody"}},
        ]
    }
    validate_request(HUBDB_V3, T + "/rows/draft/batch/update", body, "post")
    async with client(serve(fake)) as http:
        response = await http.post(f"{TABLES}/{table}/rows/draft/batch/update", json=body)
        too_many = await http.post(
            f"{TABLES}/{table}/rows/draft/batch/update",
            json={"inputs": [{"id": str(n), "values": {}} for n in range(101)]},
        )
    assert response.status_code == 207
    validate(HUBDB_V3, T + "/rows/draft/batch/update", 207, response.json(), "post")
    (result,) = response.json()["results"]
    assert result["values"]["title"] == "Batch title"
    if select is not None:
        assert result["values"][select.name]["name"] == select.options[-1]
    failed = {e["context"]["ids"][0]: e["errors"][0].get("in") for e in response.json()["errors"]}
    assert failed == {second: "values.no_such_column", third: "values.title", "12": None}
    assert too_many.status_code == 400
    assert fake.unpublished_rows(PORTAL, table) == [f"{table}:{first}"]


async def test_a_draft_reset_drops_the_tables_draft_edits(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    table, (row,) = table_rows(fake, 1)
    async with client(serve(fake)) as http:
        await http.patch(f"{TABLES}/{table}/rows/{row}/draft", json={"name": "gone soon"})
        reset = await http.post(f"{TABLES}/{table}/draft/reset")
        draft = (await http.get(f"{TABLES}/{table}/rows/{row}/draft")).json()
        published = (await http.get(f"{TABLES}/{table}/rows/{row}")).json()
    assert reset.status_code == 200
    assert draft == published
    assert fake.unpublished_rows(PORTAL, table) == []


async def test_the_draft_rows_listing_pages_through_the_draft(serve: Serve) -> None:
    fake = FakeHubSpot([SMALL])
    table, rows = table_rows(fake, 40)
    async with client(serve(fake)) as http:
        await http.patch(f"{TABLES}/{table}/rows/{rows[25]}/draft", json={"name": "in draft"})
        published = (await http.get(f"{TABLES}/{table}/rows", params={"limit": 1000})).json()
        listed: list[dict[str, object]] = []
        params: dict[str, str | int] = {"limit": 10}
        while True:
            page = (await http.get(f"{TABLES}/{table}/rows/draft", params=params)).json()
            validate(HUBDB_V3, T + "/rows/draft", 200, page)
            listed += page["results"]
            if "paging" not in page:
                break
            params["after"] = page["paging"]["next"]["after"]
    assert [r["id"] for r in listed] == [r["id"] for r in published["results"]]
    changed = [r for r, p in zip(listed, published["results"], strict=True) if r != p]
    assert [(r["id"], r["name"]) for r in changed] == [(rows[25], "in draft")]
