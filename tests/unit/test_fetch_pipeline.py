"""One fetch pipeline: how a job reads is chosen in one place (`workers.reads`), every read
writes through one writer (`workers.page_writer`), and the HubSpot client builds the change
listings as it builds its other readers, handing out none of its parts."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import smuves_sync
from smuves_sync.db import fetch_reads
from smuves_sync.db.fetch_reads import FetchRead, ReadMode
from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.models import ContentType
from smuves_sync.workers.full_read import FullRead
from smuves_sync.workers.incremental import ChangesRead, ChildChangesRead
from smuves_sync.workers.reads import strategy

PACKAGE = Path(smuves_sync.__file__).parent

# What a fetch job writes of content and of its own record: the page writer's to call.
FETCH_WRITES = {
    "content_upsert_page",
    "content_seen_add",
    "content_mark_deleted",
    "content_sync_confirm",
    "fetch_read_add",
}
SINCE = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _read(mode: ReadMode, content_type: ContentType) -> FetchRead:
    since = SINCE if mode == "incremental" else None
    return FetchRead(1, content_type, mode, "a reason", since, SINCE, 0, 0, 0, 0)


def test_the_read_is_chosen_by_its_mode_and_its_type() -> None:
    site, rows = ContentType.SITE_PAGE, ContentType.HUBDB_ROW
    since_ms = round(SINCE.timestamp() * 1000)

    assert isinstance(strategy(_read("full", site), site.spec), FullRead)
    assert isinstance(strategy(_read("full", rows), rows.spec), FullRead)
    assert strategy(_read("incremental", site), site.spec) == ChangesRead(since_ms)
    assert strategy(_read("incremental", rows), rows.spec) == ChildChangesRead(since_ms)
    assert not hasattr(fetch_reads, "decide")  # the database runs queries, decides nothing


def test_every_fetch_write_of_the_workers_goes_through_the_page_writer() -> None:
    callers = set()
    for path in (PACKAGE / "workers").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            fast = any(k.arg == "async_commit" for k in node.keywords)
            if name in FETCH_WRITES or fast:
                callers.add(path.name)
    # A push job (push.py) stores what it reads back through the same upsert, in the
    # transaction that settles its items: not a fetch's write.
    assert callers == {"page_writer.py", "push.py"}


def test_the_client_builds_the_change_listings_and_hands_out_none_of_its_parts() -> None:
    changes = ast.parse((PACKAGE / "hubspot" / "changes.py").read_text())
    imported = {n.module for n in ast.walk(changes) if isinstance(n, ast.ImportFrom)}

    assert "smuves_sync.hubspot.client" not in imported
    for part in ("get_json", "lane", "path", "malformed", "parent_records"):
        assert not hasattr(HubSpotClient, part), part
