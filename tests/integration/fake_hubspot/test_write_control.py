"""The write control calls work alike on a fake in this process and in a subprocess."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    FakeHubSpotRemote,
    WriteFault,
    WriteFaultKind,
    serve_in_subprocess,
)
from smuves_sync.testing.fake_hubspot.runner import LAUNCHER
from smuves_sync.testing.fake_hubspot.write_faults import write_fault_from_text
from tests.integration.fake_hubspot.conftest import SMALL, TOKEN, client
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


def test_the_launcher_takes_write_faults() -> None:
    rule = write_fault_from_text(
        "kind=edit_after_read,type=site_page,object_share=0.03,on=1+2,field=htmlTitle,draft=true"
    )
    assert rule == WriteFault(
        WriteFaultKind.EDIT_AFTER_READ,
        content_type=ContentType.SITE_PAGE,
        object_share=0.03,
        on_requests=(1, 2),
        field="htmlTitle",
        draft=True,
    )
    with pytest.raises(ValueError, match="unknown"):
        write_fault_from_text("kind=status,colour=red")


async def test_a_launched_fake_serves_its_write_faults() -> None:
    command = [
        sys.executable,
        str(LAUNCHER),
        "--portal",
        f"{PORTAL}:{TOKEN}:5,0,0,0,0:11",
        "--write-fault",
        "kind=status,status=503,on=1",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        page_id = FakeHubSpotRemote(base_url).ground_truth(PORTAL, "site_page")[0].hubspot_id
        async with client(base_url) as http:
            first = await http.patch(f"{SITE}/{page_id}", json={"name": "x"})
            second = await http.patch(f"{SITE}/{page_id}", json={"name": "x"})
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
    assert (first.status_code, second.status_code) == (503, 200)
