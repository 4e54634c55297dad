"""Changesets: `smuves changeset import`, `show` and `rollback`.

    smuves changeset import PORTAL FILE [--type T] [--json]     store a file's edits, preview
    smuves changeset show ID [--json]                           a changeset's items
    smuves changeset rollback ID [--json]                       undo a pushed changeset

FILE is an edit export's CSV (`smuves export PORTAL --type T --format csv --edit`), changed
or not, or JSON Lines (`.jsonl`) or a JSON changes document (`.json`). Like the on-call
commands they run as the database login role. A file that cannot be read (an unknown column,
no hubspot_id, not UTF-8, over SMUVES_CHANGESET_MAX_BYTES) is refused with one line and exit
code 2, and nothing is stored; a bad cell only makes its item invalid. `--json` prints
`{"changeset": ID, "counts": {"changed": n, "unchanged": n, "invalid": n}}` (show: the
changeset, its counts by state and its items).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from smuves_sync.changesets import (
    ChangesetFileRefused,
    Counts,
    Media,
    Preview,
    changeset_preview,
    import_changeset,
    read_changes,
    rollback_changeset,
    shown,
    type_named,
)
from smuves_sync.cli import ops_output as out
from smuves_sync.cli.common import ID
from smuves_sync.cli.ops import json_option, require_portal, with_database
from smuves_sync.cli.session import load_settings
from smuves_sync.db import Database
from smuves_sync.db.changesets import Changeset, ChangesetItem
from smuves_sync.errors import NotFound

# Items a preview prints before it points at `smuves changeset show`.
PREVIEW_ITEMS = 50
# Characters of a value a preview prints.
SHOWN_CHARS = 80


@click.group()
def changeset() -> None:
    """Import a spreadsheet's edits as a changeset, preview it, roll one back."""


def _media(path: Path) -> Media:
    suffix = path.suffix.lower()
    return {".jsonl": Media.JSONL, ".ndjson": Media.JSONL, ".json": Media.JSON}.get(
        suffix, Media.CSV
    )


def _read_file(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ChangesetFileRefused(
                f"{path.name} is {size:,} bytes, more than the {max_bytes:,} a changeset may "
                f"have (SMUVES_CHANGESET_MAX_BYTES)"
            )
        return path.read_bytes()
    except OSError as error:
        raise ChangesetFileRefused(f"cannot read {path}: {error.strerror}") from None


@changeset.command("import")
@click.argument("portal_id", type=ID)
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--type", "content_type", default=None, help="The file's content type.")
@json_option
def import_command(portal_id: int, file: Path, content_type: str | None, as_json: bool) -> None:
    """Store FILE's edits of PORTAL_ID's content as a changeset and preview it."""
    settings = load_settings()

    async def work(db: Database) -> Preview:
        await require_portal(db, portal_id)
        changes = read_changes(
            _read_file(file, settings.changeset_max_bytes),
            media=_media(file),
            content_type=None if content_type is None else type_named(content_type),
            filename=file.name,
            max_bytes=settings.changeset_max_bytes,
        )
        stored, _ = await import_changeset(
            db, portal_id, changes, owner_id=None, filename=file.name[:255]
        )
        return await _preview(db, stored.id)

    _print(with_database(work), as_json=as_json)


@changeset.command("show")
@click.argument("changeset_id", type=ID)
@json_option
def show(changeset_id: int, as_json: bool) -> None:
    """List changeset CHANGESET_ID's items: fields before → after, state, reason."""

    async def work(db: Database) -> Preview:
        return await _preview(db, changeset_id)

    preview = with_database(work)
    if as_json:
        out.echo_json(preview_json(preview))
    else:
        _print_preview(preview, limit=None)


@changeset.command("rollback")
@click.argument("changeset_id", type=ID)
@json_option
def rollback(changeset_id: int, as_json: bool) -> None:
    """Make a changeset that puts back what CHANGESET_ID's push changed, and preview it."""

    async def work(db: Database) -> Preview:
        stored, _ = await rollback_changeset(db, changeset_id, owner_id=None)
        return await _preview(db, stored.id)

    _print(with_database(work), as_json=as_json)


async def _preview(db: Database, changeset_id: int) -> Preview:
    preview = await changeset_preview(db, changeset_id)
    if preview is None:
        raise NotFound(f"changeset {changeset_id} not found")
    return preview


def _print(preview: Preview, *, as_json: bool) -> None:
    if as_json:
        out.echo_json(counts_json(preview.changeset, preview.counts))
    else:
        _print_preview(preview, limit=PREVIEW_ITEMS)


def counts_json(changeset: Changeset, counts: Counts) -> dict[str, Any]:
    """What `import --json` and `rollback --json` print."""
    return {"changeset": changeset.id, "counts": counts.as_dict()}


def item_json(item: ChangesetItem) -> dict[str, Any]:
    """One item as `show --json` prints it."""
    return {
        "content_type": str(item.content_type),
        "hubspot_id": item.hubspot_id,
        "base_version": item.base_version,
        "fields": shown(item.fields),
        "before": shown(item.before),
        "state": item.state,
        "reason": item.reason,
        "warnings": list(item.warnings),
    }


def preview_json(preview: Preview) -> dict[str, Any]:
    """What `show --json` prints."""
    return {
        "changeset": out.record_json(preview.changeset),
        "counts": preview.counts.as_dict(),
        "states": dict(preview.states),
        "requests": {"total": preview.request_total, **preview.requests},
        "items": [item_json(item) for item in preview.items],
    }


def _value(value: Any) -> str:
    text = repr(shown(value))
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _print_preview(preview: Preview, *, limit: int | None) -> None:
    changeset, counts = preview.changeset, preview.counts
    what = changeset.content_type or "several types"
    origin = (
        f"rolls back changeset {changeset.rolls_back}"
        if changeset.rolls_back
        else f"from {changeset.filename or 'the API'}"
    )
    click.echo(
        f"changeset {changeset.id} of portal {changeset.portal_id} ({what}, {origin}, "
        f"{changeset.status}): {counts.changed:,} changed, {counts.unchanged:,} unchanged, "
        f"{counts.invalid:,} invalid"
    )
    by_type = ", ".join(f"{t} {n:,}" for t, n in preview.requests.items())
    click.echo(f"push: about {preview.request_total:,} HubSpot requests ({by_type or 'none'})")
    for item, warning in preview.warnings:
        click.echo(f"warning: {item.content_type} {item.hubspot_id}: {warning}")
    listed = [item for item in preview.items if item.state != "unchanged"]
    for item in listed if limit is None else listed[:limit]:
        if item.state == "invalid":
            click.echo(f"invalid: {item.content_type} {item.hubspot_id}: {item.reason}")
            continue
        click.echo(f"{item.state}: {item.content_type} {item.hubspot_id}")
        for name, new in item.fields.items():
            click.echo(f"  {name}: {_value(item.before.get(name))} → {_value(new)}")
    if limit is not None and len(listed) > limit:
        click.echo(f"… {len(listed) - limit:,} more: smuves changeset show {changeset.id}")
