"""`smuves schedule add / list / remove`: output, refusals that change nothing, exit codes."""

from __future__ import annotations

from datetime import datetime

import pytest

from smuves_sync.cron import next_spread_fire_time, spread_offset
from smuves_sync.db import Database
from tests.support import db_now, invoke, json_out, query
from tests.support.factories import Factory


async def test_add_list_remove(db_url: str, factory: Factory, db: Database) -> None:
    portal = await factory.portal()
    before = await db_now(db)

    added = await invoke(db_url, "schedule", "add", str(portal), "--cron", "0 3 * * *")
    some = json_out(
        await invoke(
            db_url,
            "schedule",
            "add",
            str(portal),
            "--cron",
            "*/30 * * * 1-5",
            "--types",
            "blog_post, site_page",
            "--json",
        )
    )
    listed = json_out(await invoke(db_url, "schedule", "list", "--json"))
    table = await invoke(db_url, "schedule", "list", "--portal", str(portal))

    assert added.exit_code == 0
    [first, second] = listed
    assert added.stdout.startswith(
        f"schedule {first['id']}: portal {portal} at '0 3 * * *' (UTC), types site_page, "
        "landing_page, blog_post, hubdb_table, hubdb_row, blog_author, blog_tag, url_redirect, "
        "blog; next run "
    )
    # Computed from the database's clock at the time of the command: the next 03:00 UTC, plus
    # the portal's offset within SMUVES_SCHEDULE_SPREAD_SECONDS (600 s by default).
    offset = spread_offset(portal, 600)
    assert datetime.fromisoformat(first["next_run_at"]) in {
        next_spread_fire_time("0 3 * * *", before, offset),
        next_spread_fire_time("0 3 * * *", await db_now(db), offset),
    }
    assert (some["cron"], some["content_types"], some["enabled"]) == (
        "*/30 * * * 1-5",
        ["site_page", "blog_post"],
        True,
    )
    assert second == some
    assert table.exit_code == 0
    assert any(
        "*/30 * * * 1-5" in line and "site_page, blog_post" in line
        for line in table.stdout.splitlines()
    )

    removed = await invoke(db_url, "schedule", "remove", str(first["id"]))

    assert (removed.exit_code, removed.stdout.strip()) == (
        0,
        f"schedule {first['id']} removed (portal {portal}, '0 3 * * *')",
    )
    assert [s["id"] for s in await query(db, "opscheck_schedules")] == [some["id"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cron", "0 3 * *"], "invalid cron expression '0 3 * *': expected 5 fields"),
        (["--cron", "0 25 * * *"], "invalid cron expression '0 25 * * *'"),
        (["--cron", "nightly"], "invalid cron expression 'nightly'"),
        (["--cron", "0 3 * * *", "--types", "pages"], "unknown content type 'pages'"),
        (["--cron", "0 3 * * *", "--types", ","], "no content type given"),
        (["--cron", "0 0 31 2 *"], "invalid cron expression '0 0 31 2 *': it never fires"),
    ],
)
async def test_add_refuses_bad_input_and_changes_nothing(
    db_url: str, factory: Factory, db: Database, args: list[str], message: str
) -> None:
    portal = await factory.portal()

    result = await invoke(db_url, "schedule", "add", str(portal), *args)

    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""
    assert await query(db, "opscheck_schedules") == []


async def test_unknown_portal_and_schedule_are_exit_code_2(db_url: str, db: Database) -> None:
    add = await invoke(db_url, "schedule", "add", "424242", "--cron", "0 3 * * *")
    listing = await invoke(db_url, "schedule", "list", "--portal", "424242")
    remove = await invoke(db_url, "schedule", "remove", "77")
    missing_cron = await invoke(db_url, "schedule", "add", "424242")

    assert add.exit_code == 2
    assert "portal 424242 is not known" in add.stderr
    assert (listing.exit_code, listing.stderr.strip()) == (2, "Error: portal 424242 not found")
    assert remove.exit_code == 2
    assert "schedule 77 not found" in remove.stderr
    assert missing_cron.exit_code == 2
    assert "Missing option '--cron'" in missing_cron.stderr
    assert await query(db, "opscheck_schedules") == []
    assert (await invoke(db_url, "schedule", "list")).stdout.strip() == "no schedules"
