"""Content history: `smuves history`, `smuves diff` and `smuves changes`.

    smuves history PORTAL TYPE HUBSPOT_ID [--json]            an object's versions
    smuves diff PORTAL TYPE HUBSPOT_ID [--from V] [--to V] [--json]
    smuves changes PORTAL [--since-run N | --since 2026-11-01] [--type T] [--format csv|jsonl]

Like the on-call commands they run as the database login role and see every portal. The
versions are written by content_items' triggers (migrations/functions/history.sql) whenever a
fetch stores a changed object; `diff` compares two versions field by field
(`smuves_sync.json_diff`), by default the newest with the one before it; `changes` streams what
was created, updated, archived, unarchived, deleted or restored in a portal, oldest first,
through a server-side cursor (nothing is held in memory). An unknown portal, object or version
exits 2.
"""

from __future__ import annotations

import csv
import json
import sys
from datetime import UTC, datetime
from typing import IO, Any

import click
from rich.table import Table

from smuves_sync.cli import ops_output as out
from smuves_sync.cli.common import ID, ExitCode, command_error
from smuves_sync.cli.ops import json_option, require_portal, with_database
from smuves_sync.db import Database
from smuves_sync.db.versions import (
    ChangeFilter,
    ContentChange,
    ContentVersion,
    VersionDocument,
    changes_stream,
    compared_versions,
    version_documents,
    version_latest,
    versions_of_object,
)
from smuves_sync.errors import NotFound
from smuves_sync.json_diff import FieldChange, diff_documents
from smuves_sync.models import ContentType
from smuves_sync.workers.export_format import neutralise_cell

# The columns of `smuves changes`, in order.
CHANGE_COLUMNS = (
    "recorded_at",
    "run_id",
    "content_type",
    "hubspot_id",
    "version",
    "event",
    "name",
)
MAX_VERSION = 2**31 - 1

type_argument = click.argument(
    "content_type", metavar="TYPE", type=click.Choice([str(t) for t in ContentType])
)
hubspot_id_argument = click.argument("hubspot_id")


def _object_name(portal_id: int, content_type: str, hubspot_id: str) -> str:
    return f"{content_type} {hubspot_id} of portal {portal_id}"


async def _require_history(
    db: Database, portal_id: int, content_type: ContentType, hubspot_id: str
) -> int:
    """The object's newest version; NotFound for an unknown portal or an object without one."""
    await require_portal(db, portal_id)
    latest = await version_latest(db, portal_id, content_type, hubspot_id)
    if latest is None:
        raise NotFound(
            f"{_object_name(portal_id, content_type, hubspot_id)} has no history "
            "(no such object stored)"
        )
    return latest


# -- history -------------------------------------------------------------------------------------


def version_json(version: ContentVersion) -> dict[str, out.JSONValue]:
    """A version as a JSON object."""
    return {**out.record_json(version), "current": version.current}


def versions_table(versions: list[ContentVersion], title: str) -> Table:
    """An object's versions: what began each, when, the runs it held for, its hash. (A
    version ends when the next one is recorded.)"""
    table = Table(title=title, title_justify="left")
    for header in ("version", "event", "recorded", "run", "until run", "hash"):
        table.add_column(header, no_wrap=True)
    for v in versions:
        until = "current" if v.current else "-"
        table.add_row(
            str(v.version),
            str(v.event),
            out.when(v.recorded_at),
            str(v.seen_from_run) if v.seen_from_run is not None else "-",
            str(v.seen_until_run) if v.seen_until_run is not None else until,
            (v.hash or "-")[:12],
        )
    return table


@click.command("history")
@click.argument("portal_id", type=ID)
@type_argument
@hubspot_id_argument
@json_option
def history(portal_id: int, content_type: str, hubspot_id: str, as_json: bool) -> None:
    """List the versions of one object of a portal, oldest first."""
    wanted = ContentType(content_type)

    async def work(db: Database) -> list[ContentVersion]:
        await _require_history(db, portal_id, wanted, hubspot_id)
        return await versions_of_object(db, portal_id, wanted, hubspot_id)

    versions = with_database(work)
    if as_json:
        out.echo_json([version_json(v) for v in versions])
        return
    title = f"versions of {_object_name(portal_id, content_type, hubspot_id)}"
    out.console().print(versions_table(versions, title))


# -- diff ----------------------------------------------------------------------------------------


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def diff_lines(changes: list[FieldChange]) -> list[str]:
    """The field changes as text: '~ path: old → new', '+ path: new', '- path: old', and
    long text as an indented unified diff under its path."""
    lines: list[str] = []
    for change in changes:
        if change.kind == "added":
            lines.append(f"+ {change.path}: {_value(change.new)}")
        elif change.kind == "removed":
            lines.append(f"- {change.path}: {_value(change.old)}")
        elif change.text_diff is not None:
            lines.append(f"~ {change.path}:")
            lines.extend(f"    {line}" for line in change.text_diff)
        else:
            lines.append(f"~ {change.path}: {_value(change.old)} → {_value(change.new)}")
    return lines


def _label(found: VersionDocument | None) -> str:
    if found is None:
        return "nothing"
    v = found.version
    run = f", run {v.seen_from_run}" if v.seen_from_run is not None else ""
    return f"version {v.version} ({v.event}{run}, {out.when(v.recorded_at)})"


def change_json(change: FieldChange) -> dict[str, out.JSONValue]:
    """A field change as a JSON object."""
    text = list(change.text_diff) if change.text_diff is not None else None
    return {
        "path": change.path,
        "kind": change.kind,
        "old": change.old,
        "new": change.new,
        "text_diff": text,
    }


@click.command("diff")
@click.argument("portal_id", type=ID)
@type_argument
@hubspot_id_argument
@click.option(
    "--from",
    "from_version",
    type=click.IntRange(1, MAX_VERSION),
    help="The older version (default: the one before --to).",
)
@click.option(
    "--to",
    "to_version",
    type=click.IntRange(1, MAX_VERSION),
    help="The newer version (default: the current one).",
)
@json_option
def diff(
    portal_id: int,
    content_type: str,
    hubspot_id: str,
    from_version: int | None,
    to_version: int | None,
    as_json: bool,
) -> None:
    """Show what changed in one object between two versions, field by field."""
    wanted = ContentType(content_type)

    async def work(db: Database) -> tuple[VersionDocument | None, VersionDocument]:
        latest = await _require_history(db, portal_id, wanted, hubspot_id)
        since, to = compared_versions(latest, from_version, to_version)
        asked = [to] if since is None else [since, to]
        found = await version_documents(db, portal_id, wanted, hubspot_id, asked)
        missing = [v for v in asked if v not in found]
        if missing:
            raise NotFound(
                f"{_object_name(portal_id, content_type, hubspot_id)} has no version "
                f"{missing[0]} (see `smuves history {portal_id} {content_type} {hubspot_id}`)"
            )
        return (found[since] if since is not None else None), found[to]

    before, after = with_database(work)
    changes = diff_documents(
        before.document if before else None,
        after.document,
        old_label=f"version {before.version.version}" if before else "nothing",
        new_label=f"version {after.version.version}",
    )
    if as_json:
        out.echo_json(
            {
                "from": version_json(before.version) if before else None,
                "to": version_json(after.version),
                "changes": [change_json(c) for c in changes],
            }
        )
        return
    click.echo(
        f"{_object_name(portal_id, content_type, hubspot_id)}: {_label(before)} → {_label(after)}"
    )
    if not changes:
        click.echo("no field changed")
    for line in diff_lines(changes):
        click.echo(line)


# -- changes -------------------------------------------------------------------------------------


def parse_since(text: str) -> datetime:
    """'2026-11-01' (midnight UTC) or an ISO 8601 time (UTC unless it names its offset)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise command_error(
            f"--since must be a date or time such as 2026-11-01 or 2026-11-01T06:00:00Z; "
            f"got {text!r}",
            ExitCode.USAGE,
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    return neutralise_cell(str(value))


def change_row(change: ContentChange) -> dict[str, Any]:
    """One change as the columns of `smuves changes`."""
    return {
        "recorded_at": change.recorded_at,
        "run_id": change.run_id,
        "content_type": str(change.content_type),
        "hubspot_id": change.hubspot_id,
        "version": change.version,
        "event": str(change.event),
        "name": change.name,
    }


def _write(stream: IO[str], change: ContentChange, fmt: str, writer: Any) -> None:
    row = change_row(change)
    if fmt == "csv":
        writer.writerow([_cell(row[column]) for column in CHANGE_COLUMNS])
        return
    row["recorded_at"] = change.recorded_at.isoformat()
    stream.write(json.dumps(row, ensure_ascii=False))
    stream.write("\n")


@click.command("changes")
@click.argument("portal_id", type=ID)
@click.option("--since-run", "since_run", type=ID, help="Changes made by this run or later.")
@click.option("--since", "since", help="Changes recorded at or after: 2026-11-01, or a time.")
@click.option(
    "--type",
    "content_type",
    type=click.Choice([str(t) for t in ContentType]),
    help="Only this content type.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl"]),
    default="csv",
    show_default=True,
)
def changes(
    portal_id: int, since_run: int | None, since: str | None, content_type: str | None, fmt: str
) -> None:
    """Stream what was created, updated, archived, unarchived, deleted or restored in a
    portal, oldest first: one line per version, as CSV or JSON Lines."""
    if since_run is not None and since is not None:
        raise command_error("give --since-run or --since, not both", ExitCode.USAGE)
    moment = parse_since(since) if since is not None else None
    wanted = ContentType(content_type) if content_type else None
    stream = sys.stdout
    writer = csv.writer(stream, lineterminator="\n")

    async def work(db: Database) -> int:
        await require_portal(db, portal_id)
        if fmt == "csv":
            writer.writerow(CHANGE_COLUMNS)
        count = 0
        async with db.transaction() as scoped:
            where = ChangeFilter(since_run=since_run, since=moment, content_type=wanted)
            found = changes_stream(scoped, portal_id, where)
            async for change in found:
                _write(stream, change, fmt, writer)
                count += 1
        stream.flush()
        return count

    with_database(work)
