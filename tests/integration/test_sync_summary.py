"""`smuves sync`'s closing summary fits the terminal: every column on a wide one; on 80 columns
the ones a person reads first (type, status, stored, changed, requests, note), saying that
`smuves run N` shows the rest."""

from __future__ import annotations

import re

import pytest

from tests.support import Sync, fake_portal, smuves

SPEC = fake_portal(4100, "3,2,2,1,3,2,2,2,1", seed=7)
pytestmark = pytest.mark.hubspot(SPEC, ten_second_limit=None)
EVERY_COLUMN: tuple[str, ...] = (
    "type",
    "status",
    "read",
    "processed",
    "total",
    "not stored",
    "requests",
)
EVERY_COLUMN += ("changed", "deleted", "unchanged", "deletions found by", "attempts", "note")
TYPES = ("site_page", "landing_page", "blog_post", "hubdb_table", "hubdb_row", "url_redirect")


def _summary(out: str) -> list[str]:
    """The summary table's lines: from its title to the line after its last row."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"fetch run \d+ of portal", line))
    return lines[start:]


async def test_the_summary_shows_every_column_when_they_fit_and_fewer_at_80_columns(
    sync: Sync,
) -> None:
    portal = await sync.plant_portal()
    wide = await smuves(sync.env(COLUMNS="250"), "sync", str(portal))
    assert wide.code == 0, wide.stdout + wide.stderr
    summary = _summary(wide.stdout)
    [header] = [line for line in summary if "status" in line]
    cells = [cell.strip() for cell in header.strip("┃│ ").split("┃")]
    assert tuple(cells) == EVERY_COLUMN, header
    assert "shows the rest" not in wide.stdout
    # A first fetch reads every type in full: that is how its deletions are found, at the cost
    # of all its requests.
    rows = [line for line in summary if "site_page" in line]
    assert rows and re.search(r"full read [\d,]+", rows[0]), rows

    narrow = await smuves(sync.env(COLUMNS="80"), "sync", str(portal))
    assert narrow.code == 0, narrow.stdout + narrow.stderr
    run_id = re.search(r"run (\d+): fetching", narrow.stdout)
    assert run_id is not None
    summary = _summary(narrow.stdout)
    assert all(len(line) <= 80 for line in summary), "\n".join(summary)
    [header] = [line for line in summary if "status" in line]
    assert re.findall(r"[a-z]+", header) == [
        "type",
        "status",
        "stored",
        "changed",
        "requests",
        "note",
    ]
    # Every type's row, its name unbroken.
    for content_type in TYPES:
        assert any(re.search(rf"\b{content_type}\b", line) for line in summary), content_type
    text = " ".join(" ".join(summary).split())
    assert f"`smuves run {run_id.group(1)}` shows the rest of the columns" in text
