"""The write control calls work alike on a fake in this process and in a subprocess."""

from __future__ import annotations

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    WriteFault,
    WriteFaultKind,
    serve_in_subprocess,
)
from tests.integration.fake_hubspot.conftest import SMALL, client
from tests.integration.fake_hubspot.writes_support import PORTAL, SITE, TABLES, table_rows


async def test_the_subprocess_fake_takes_write_faults_and_peoples_edits() -> None:
    local = FakeHubSpot([SMALL])
    table, (row,) = table_rows(local, 1)
    page_id = local.ground_truth(PORTAL, "site_page", archived=False)[0].hubspot_id
    with serve_in_subprocess([SMALL]) as fake:
        fake.set_write_faults(
            (
                WriteFault(
                    WriteFaultKind.COMMIT_THEN_DROP,
                    content_type=ContentType.SITE_PAGE,
                    on_requests=(1,),
                ),
                WriteFault(
                    WriteFaultKind.EDIT_AFTER_READ, object_id=page_id, field="name", value="Theirs"
                ),
            )
        )
        async with client(fake.base_url) as http:
            with pytest.raises(httpx.TransportError):
                await http.patch(f"{SITE}/{page_id}", json={"htmlTitle": "Ours"})
            read = (await http.get(f"{SITE}/{page_id}")).json()
            now = (await http.get(f"{SITE}/{page_id}")).json()
            fake.person_edit(
                PORTAL, "hubdb_row", f"{table}:{row}", {"values.title": "wip"}, draft=True
            )
            draft = (await http.get(f"{TABLES}/{table}/rows/{row}/draft")).json()
        log = fake.write_log(PORTAL)
        stats = fake.write_stats(PORTAL)
        unpublished = fake.unpublished_rows(PORTAL, table)
        with pytest.raises(httpx.HTTPStatusError):
            fake.person_edit(PORTAL, "site_page", "12345", {"name": "nobody"})
        with pytest.raises(httpx.HTTPStatusError):  # a row has no headHtml
            fake.person_edit(PORTAL, "hubdb_row", f"{table}:{row}", {"headHtml": "x"})
    assert read["htmlTitle"] == "Ours" and read["name"] != "Theirs"
    assert now["name"] == "Theirs"
    assert draft["values"]["title"] == "wip"
    assert [(e["op"], e["id"]) for e in log] == [
        ("live", page_id),
        ("person", page_id),
        ("person_draft", f"{table}:{row}"),
    ]
    assert stats["fault_commit_then_drop"] == 1 and stats["write_requests"] == 1
    assert unpublished == [f"{table}:{row}"]
