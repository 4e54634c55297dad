"""`smuves history`, `smuves diff`, `smuves changes` and `smuves admin prune` of content history."""

from __future__ import annotations

import csv
import io
import json

import pytest

from smuves_sync.db import Database
from smuves_sync.json_diff import TOO_LARGE
from tests.integration.api.test_history import BIG_BODY, BIG_EDIT
from tests.integration.test_content_store import record
from tests.integration.test_content_versions import counts, fetch
from tests.support import invoke, json_out, query
from tests.support.factories import Factory

BODY = "<h1>Hello</h1><p>" + "The first words of a long post body. " * 4 + "</p><p>Kept.</p>"
EDITED = BODY.replace("first", "edited")


@pytest.fixture
async def portal(factory: Factory, worker_db: Database) -> tuple[int, list[int]]:
    """Post 1 created, then renamed with an edited body; post 2 created, then deleted."""
    portal = await factory.portal()
    first = await fetch(factory, worker_db, portal, [record("1", body=BODY), record("2")])
    second = await fetch(
        factory, worker_db, portal, [record("1", name="New name", body=EDITED)], gone=("2",)
    )
    return portal, [first, second]


async def test_diff_of_megabyte_bodies_says_the_line_diff_is_too_large(
    db_url: str, factory: Factory, worker_db: Database
) -> None:
    portal = await factory.portal()
    await fetch(factory, worker_db, portal, [record("1", body=BIG_BODY)])
    await fetch(factory, worker_db, portal, [record("1", name="New name", body=BIG_EDIT)])
    too_large = f"{TOO_LARGE}: {len(BIG_BODY):,} and {len(BIG_EDIT):,} characters (the line diffs"

    result = await invoke(db_url, "diff", str(portal), "blog_post", "1")
    as_json = json_out(await invoke(db_url, "diff", str(portal), "blog_post", "1", "--json"))

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "~ $.body:"
    assert lines[2].startswith(f"    {too_large}")
    assert lines[3:] == ['~ $.name: "Post 1" → "New name"']
    body, name = as_json["changes"]
    assert (body["path"], body["old"], body["new"]) == ("$.body", BIG_BODY, BIG_EDIT)
    assert len(body["text_diff"]) == 1 and body["text_diff"][0].startswith(too_large)
    assert (name["path"], name["text_diff"]) == ("$.name", None)


async def test_history_lists_an_objects_versions(
    db_url: str, portal: tuple[int, list[int]]
) -> None:
    portal_id, runs = portal
    table = await invoke(db_url, "history", str(portal_id), "blog_post", "1")
    as_json = json_out(await invoke(db_url, "history", str(portal_id), "blog_post", "1", "--json"))

    assert table.exit_code == 0, table.output
    assert f"versions of blog_post 1 of portal {portal_id}" in table.stdout
    rows = [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in table.stdout.splitlines()
        if "│" in line
    ]
    assert [[row[0], row[1], row[4]] for row in rows] == [
        ["1", "created", str(runs[1])],
        ["2", "updated", "current"],
    ]
    assert [(v["version"], v["event"], v["seen_from_run"], v["current"]) for v in as_json] == [
        (1, "created", runs[0], False),
        (2, "updated", runs[1], True),
    ]


async def test_diff_shows_each_changed_field_and_long_text_as_a_unified_diff(
    db_url: str, portal: tuple[int, list[int]]
) -> None:
    portal_id, runs = portal
    result = await invoke(db_url, "diff", str(portal_id), "blog_post", "1")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"blog_post 1 of portal {portal_id}: version 1 (created, run ")
    assert f"→ version 2 (updated, run {runs[1]}, " in lines[0]
    # jsonb keeps keys shortest first: body, then name.
    assert lines[1:] == [
        "~ $.body:",
        "    --- version 1",
        "    +++ version 2",
        "    @@ -1,3 +1,3 @@",
        "     <h1>Hello</h1>",
        f"    -{BODY.split('</p>')[0].removeprefix('<h1>Hello</h1>')}</p>",
        f"    +{EDITED.split('</p>')[0].removeprefix('<h1>Hello</h1>')}</p>",
        "     <p>Kept.</p>",
        '~ $.name: "Post 1" → "New name"',
    ]

    same = await invoke(db_url, "diff", str(portal_id), "blog_post", "1", "--from", "2")
    assert same.stdout.splitlines()[1:] == ["no field changed"]
    first = json_out(
        await invoke(db_url, "diff", str(portal_id), "blog_post", "2", "--to", "1", "--json")
    )
    assert first["from"] is None and first["to"]["version"] == 1
    assert [c["path"] for c in first["changes"]] == ["$.id", "$.name", "$.slug", "$.widgets"]


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("diff", ("blog_post", "1", "--to", "3"), "has no version 3"),
        ("diff", ("blog_post", "9"), "blog_post 9 of portal {portal} has no history"),
        ("diff", ("site_page", "1"), "site_page 1 of portal {portal} has no history"),
        (
            "changes",
            ("--since-run", "1", "--since", "2026-01-01"),
            "give --since-run or --since, not both",
        ),
        ("changes", ("--since", "yesterday"), "--since must be a date or time"),
        ("changes", ("--since-run", "0"), "must be an id"),
    ],
)
async def test_diff_and_changes_refuse_what_they_cannot_show(
    db_url: str,
    portal: tuple[int, list[int]],
    command: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    portal_id, _ = portal
    result = await invoke(db_url, command, str(portal_id), *args)
    assert result.exit_code == 2
    assert message.format(portal=portal_id) in result.stderr
    assert result.stdout == ""


async def test_diff_refuses_an_unknown_portal(db_url: str) -> None:
    unknown = await invoke(db_url, "diff", "424242", "blog_post", "1")
    assert (unknown.exit_code, unknown.stderr.strip()) == (2, "Error: portal 424242 not found")


async def test_changes_streams_a_portals_changes_as_csv_or_json_lines(
    db_url: str, portal: tuple[int, list[int]]
) -> None:
    portal_id, runs = portal
    every = await invoke(db_url, "changes", str(portal_id))
    assert every.exit_code == 0, every.output
    rows = list(csv.DictReader(io.StringIO(every.stdout)))
    assert [(r["run_id"], r["hubspot_id"], r["version"], r["event"]) for r in rows] == [
        (str(runs[0]), "1", "1", "created"),
        (str(runs[0]), "2", "1", "created"),
        (str(runs[1]), "1", "2", "updated"),
        (str(runs[1]), "2", "2", "deleted"),
    ]
    assert list(rows[0]) == [
        "recorded_at",
        "run_id",
        "content_type",
        "hubspot_id",
        "version",
        "event",
        "name",
    ]
    assert rows[0]["name"] == "New name"  # the object's name now

    lines = await invoke(
        db_url, "changes", str(portal_id), "--since-run", str(runs[1]), "--format", "jsonl"
    )
    found = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [(c["hubspot_id"], c["event"], c["run_id"]) for c in found] == [
        ("1", "updated", runs[1]),
        ("2", "deleted", runs[1]),
    ]
    later = await invoke(db_url, "changes", str(portal_id), "--since", "2999-01-01")
    assert later.stdout.splitlines() == [",".join(rows[0])]
    pages = await invoke(db_url, "changes", str(portal_id), "--type", "site_page")
    assert len(pages.stdout.splitlines()) == 1


async def test_admin_prune_without_an_age_prunes_history_past_its_retention(
    db_url: str, portal: tuple[int, list[int]], db: Database
) -> None:
    portal_id, _ = portal
    await query(db.pool, "versions_age", portal_id=portal_id, hubspot_id=None, by="100 days")

    dry = json_out(await invoke(db_url, "admin", "prune", "--dry-run", "--json"))
    kept = await invoke(db_url, "admin", "prune", env={"SMUVES_HISTORY_DAYS": "0"})
    assert (dry["dry_run"], dry["history_days"], dry["versions"]) == (True, 90, 2)
    assert (
        kept.stdout.strip()
        == "SMUVES_HISTORY_DAYS is 0: every content version is kept, none pruned"
    )
    assert await counts(db, portal_id) == (4, 1)

    done = await invoke(db_url, "admin", "prune")

    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("deleted 2 content version(s) superseded more than 90 day(s)")
    assert await counts(db, portal_id) == (2, 0)
    result = json_out(await invoke(db_url, "history", str(portal_id), "blog_post", "1", "--json"))
    assert [v["version"] for v in result] == [2]
