"""HubDB cells whose column names Postgres cannot hold as they are (a NUL), and reasons that
quote what a person sent: both stored, escaped, and shown back as sent."""

from __future__ import annotations

from typing import Any

from smuves_sync.changesets import Changes, changeset_preview, import_changeset, shown
from smuves_sync.changesets.files import ChangeRow
from smuves_sync.db import Database
from smuves_sync.db.content import content_upsert_page
from smuves_sync.models import ContentType
from tests.support.factories import Factory

TABLE, ROW = ContentType.HUBDB_TABLE, ContentType.HUBDB_ROW
ODD_COLUMN = "odd\x00name"


async def _plant(factory: Factory, worker_db: Database) -> int:
    portal = await factory.portal()
    run = await factory.run(portal)
    table: dict[str, Any] = {
        "id": "5",
        "name": "products",
        "columns": [{"name": "title", "type": "TEXT"}, {"name": ODD_COLUMN, "type": "NUMBER"}],
    }
    row = {"id": "9", "path": "p-9", "name": "Nine", "values": {"title": "T", ODD_COLUMN: 1}}
    other = {**row, "id": "8", "path": "p-8"}
    async with worker_db.for_job(await factory.lease(portal)) as scoped:
        await content_upsert_page(scoped, portal, TABLE, run.id, [TABLE.spec.read(table)])
        await content_upsert_page(
            scoped, portal, ROW, run.id, [ROW.spec.read(r, parent_id="5") for r in (row, other)]
        )
    return portal


async def test_a_column_named_with_a_nul_is_compared_and_stored_escaped(
    factory: Factory, worker_db: Database, db: Database
) -> None:
    portal = await _plant(factory, worker_db)
    rows = [
        ChangeRow("5:9", None, {f"values.{ODD_COLUMN}": "2", "values.title": "T"}),
        ChangeRow("5:10", None, {"values.title": "x"}),
        ChangeRow("5:8", None, {"values.gone\x00": "1"}),
    ]

    changeset, counts = await import_changeset(
        db, portal, Changes(ROW, rows), owner_id=None, filename=None
    )
    preview = await changeset_preview(db, changeset.id)

    assert preview is not None
    assert (counts.changed, counts.invalid) == (1, 2)
    items = {item.hubspot_id: item for item in preview.items}
    assert shown(items["5:9"].fields) == {f"values.{ODD_COLUMN}": 2}
    assert shown(items["5:9"].before) == {f"values.{ODD_COLUMN}": 1}
    assert "has no hubdb_row 5:10" in (items["5:10"].reason or "")
    reason = items["5:8"].reason or ""
    assert "gone\ufffd: the row's table has no such column" in reason
