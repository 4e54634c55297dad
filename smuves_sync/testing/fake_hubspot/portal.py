"""One generated portal: its collections at the current version, and the ground truth.

Collections are built on first use and replay the portal's version history then, so a portal
of any size costs nothing until a listing (or the ground truth) touches it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.blog import BUILDERS as BLOG_BUILDERS
from smuves_sync.testing.fake_hubspot.content import Builder, PageBuilder
from smuves_sync.testing.fake_hubspot.hubdb import (
    ColumnDef,
    RowBuilder,
    TableBuilder,
    table_columns,
)
from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle, Timeline, mix64
from smuves_sync.testing.fake_hubspot.poison import served_dicts
from smuves_sync.testing.fake_hubspot.query import Collection
from smuves_sync.testing.fake_hubspot.spec import Churn, PortalSpec, TimestampStyle
from smuves_sync.testing.fake_hubspot.text import datetime_ms

PAGE_TYPES = (ContentType.SITE_PAGE, ContentType.LANDING_PAGE, ContentType.BLOG_POST)


@dataclass(frozen=True, slots=True)
class TruthItem:
    """An object the server serves: `hubspot_id` as the client stores it (rows: 'table:row')."""

    hubspot_id: str
    updated_at: datetime
    archived: bool
    data: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready form (an item of the admin truth endpoint); `data` when it is known."""
        entry: dict[str, Any] = {
            "id": self.hubspot_id,
            "updated": self.updated_at.isoformat(),
            "archived": self.archived,
        }
        if self.data is not None:
            entry["data"] = self.data
        return entry

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> TruthItem:
        """Inverse of `as_json`."""
        updated_at = datetime.fromisoformat(raw["updated"])
        return cls(raw["id"], updated_at, raw["archived"], raw.get("data"))


class PortalModel:
    """The content of one portal at its current version."""

    def __init__(
        self,
        spec: PortalSpec,
        timestamps: TimestampStyle,
        *,
        offset_cursors: bool = False,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self.spec = spec
        # The fake's clock (None: the synthetic timeline): when a step or a drift happens.
        self.clock_ms = clock_ms
        self.timeline = Timeline()
        self.timestamps = timestamps
        # Page the default order by position, as HubSpot does (ServerConfig.cursors).
        self.offset_cursors = offset_cursors
        self.history: list[Churn] = []
        self._collections: dict[tuple[ContentType, int], Collection] = {}
        self._columns: dict[int, tuple[ColumnDef, ...]] = {}

    @property
    def version(self) -> int:
        """0 for the initial content, +1 per `advance`."""
        return len(self.history)

    def advance(self, churn: Churn) -> int:
        """Move to the next version: some objects change, some go, some arrive."""
        self.timeline.record(self.clock_ms() if self.clock_ms is not None else None)
        self.history.append(churn)
        return self.version

    def collection(self, content_type: ContentType, table_slot: int = -1) -> Collection:
        """The collection of a type (of one table's rows), caught up with the history."""
        key = (content_type, table_slot)
        collection = self._collections.get(key)
        if collection is None:
            collection = self._collections[key] = self._build(content_type, table_slot)
        collection.life.catch_up(self.history)
        return collection

    def _build(self, content_type: ContentType, table_slot: int) -> Collection:
        spec = self.spec
        life_key = f"{spec.seed}|{spec.portal_id}|{content_type.value}"
        builder: Builder
        if content_type is ContentType.HUBDB_ROW:
            life_key += f"|{table_slot}"
            builder = RowBuilder(spec.portal_id, table_slot, self.columns(table_slot), spec.host)
        elif content_type is ContentType.HUBDB_TABLE:
            builder = TableBuilder(spec.portal_id, self._rows_life, self.columns)
        elif content_type in BLOG_BUILDERS:
            builder = BLOG_BUILDERS[content_type](spec, self.timestamps)
        else:
            builder = PageBuilder(content_type, spec, self.timestamps)
        life = Lifecycle(
            life_key,
            spec.initial_count(content_type),
            spec.archived_share,
            content_type,
            timeline=self.timeline,
            clock_ms=self.clock_ms,
        )
        collection = Collection(life, builder)
        collection.poisons = {
            p.slot: p.kind
            for p in spec.poison
            if p.content_type is content_type
            and (content_type is not ContentType.HUBDB_ROW or p.table_slot == table_slot)
        }
        return collection

    def _rows_life(self, table_slot: int) -> Lifecycle:
        return self.collection(ContentType.HUBDB_ROW, table_slot).life

    def columns(self, table_slot: int) -> tuple[ColumnDef, ...]:
        """The columns of a table, fixed for its lifetime."""
        columns = self._columns.get(table_slot)
        if columns is None:
            salt = mix64(self.collection(ContentType.HUBDB_TABLE).life.salt ^ table_slot)
            columns = self._columns[table_slot] = table_columns(salt)
        return columns

    def find_table(self, id_or_name: str) -> tuple[int, bool] | None:
        """(slot, archived) of the table with this id or name, or None when there is none."""
        tables = self.collection(ContentType.HUBDB_TABLE)
        slot = tables.builder.slot_of(id_or_name)
        if slot is None:
            life = tables.life
            slot = next(
                (s for s in range(life.size) if TableBuilder.name_of(life, s) == id_or_name), None
            )
        if slot is None or not tables.life.exists(slot):
            return None
        return slot, tables.life.is_archived(slot)

    def find_object(
        self, content_type: ContentType, object_id: str, table_slot: int = -1
    ) -> tuple[Collection, int] | None:
        """The collection and slot of one object, or None when it does not exist."""
        collection = self.collection(content_type, table_slot)
        slot = collection.builder.slot_of(object_id)
        if slot is None or not collection.life.exists(slot):
            return None
        return collection, slot

    def purge(self, content_type: ContentType, hubspot_ids: list[str]) -> int:
        """Purge objects by their ids as the client stores them (rows: 'table:row'): they
        leave both listings, as when emptied from HubSpot's recycle bin; returns how many
        existed."""
        slots: dict[int, list[int]] = {}
        for hubspot_id in hubspot_ids:
            table_slot, object_id = -1, hubspot_id
            if content_type is ContentType.HUBDB_ROW:
                table_id, _, object_id = hubspot_id.partition(":")
                table = self.find_table(table_id)
                if table is None:
                    continue
                table_slot = table[0]
            slot = self.collection(content_type, table_slot).builder.slot_of(object_id)
            if slot is not None:
                slots.setdefault(table_slot, []).append(slot)
        return sum(
            self.collection(content_type, table_slot).life.purge(found)
            for table_slot, found in slots.items()
        )

    def set_archived(self, content_type: ContentType, ids: list[str], archived: bool) -> list[str]:
        """Archive (or un-archive) objects of a type by id; returns the ids it changed. HubDB
        rows are not archived one by one (a table's are, with it)."""
        if content_type is ContentType.HUBDB_ROW:
            raise ValueError("rows are not archived by id; archive their table")
        collection = self.collection(content_type)
        builder, life = collection.builder, collection.life
        slots = [slot for slot in map(builder.slot_of, ids) if slot is not None]
        done = life.archive(slots) if archived else life.unarchive(slots)
        return [builder.id_of(slot) for slot in done]

    def ground_truth(
        self, content_type: ContentType, *, archived: bool | None = None, with_data: bool = False
    ) -> list[TruthItem]:
        """Exactly the objects the listings serve, in slot order (rows: table by table)."""
        if content_type is not ContentType.HUBDB_ROW:
            return _truth(self.collection(content_type), "", archived, with_data)
        tables = self.collection(ContentType.HUBDB_TABLE)
        items: list[TruthItem] = []
        for table_slot in tables.life.live(archived=False):
            prefix = tables.builder.id_of(table_slot) + ":"
            rows = self.collection(ContentType.HUBDB_ROW, table_slot)
            items.extend(_truth(rows, prefix, archived, with_data))
        return items


def _truth(
    collection: Collection, prefix: str, archived: bool | None, with_data: bool
) -> list[TruthItem]:
    life, builder = collection.life, collection.builder
    flags = (False, True) if archived is None else (archived,)
    slots = sorted(slot for flag in flags for slot in life.live(archived=flag))
    return [
        TruthItem(
            hubspot_id=prefix + builder.id_of(slot),
            updated_at=datetime_ms(builder.updated_ms(life, slot)),
            archived=life.is_archived(slot),
            data=served_dicts(collection.poisons, builder, life, slot)[-1] if with_data else None,
        )
        for slot in slots
    ]
