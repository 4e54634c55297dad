"""The fake's write state: the write fault plan, a writer per portal, people's edits, the log.

`FakeHubSpot.writes` is one of these; the control API's write calls (`set_write_faults`,
`person_edit`, `write_log`, `write_stats`, `unpublished_rows`) land here.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.query import Collection
from smuves_sync.testing.fake_hubspot.text import iso_ms
from smuves_sync.testing.fake_hubspot.write_faults import WriteFault, WriteFaultPlan
from smuves_sync.testing.fake_hubspot.write_ops import Writer
from smuves_sync.testing.fake_hubspot.writes import PERSON_USER, read_value

if TYPE_CHECKING:
    from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
    from smuves_sync.testing.fake_hubspot.portal import PortalModel

DEFAULT_PERSON_FIELD = "headHtml"  # pages and posts: a field no changeset edits
_MISSING = object()


class FakeWrites:
    """Everything the write endpoints keep besides the objects' overlays."""

    def __init__(self, fake: FakeHubSpot) -> None:
        self.fake = fake
        self.plan = WriteFaultPlan((), fake.config.fault_seed)
        self._writers: dict[int, Writer] = {}
        self._stats: dict[int, Counter[str]] = {}
        self._log: dict[int, list[dict[str, Any]]] = {}

    def set_faults(self, rules: tuple[WriteFault, ...]) -> None:
        """Replace the write fault rules; their counts start again from 1."""
        self.plan = WriteFaultPlan(rules, self.fake.config.fault_seed)

    def writer(self, portal_id: int) -> Writer:
        """The portal's writer (its clock keeps write times strictly increasing)."""
        writer = self._writers.get(portal_id)
        if writer is None:
            writer = self._writers[portal_id] = Writer(self.fake.portal(portal_id))
        return writer

    def count(self, portal_id: int, key: str, n: int = 1) -> None:
        """Add to one of the portal's write counters."""
        self._stats.setdefault(portal_id, Counter())[key] += n

    def reset_stats(self) -> None:
        """Zero the write counters (the write log stays)."""
        self._stats.clear()

    def stats(self, portal_id: int) -> dict[str, int]:
        """The portal's write counters (requests, committed objects, faults by kind …)."""
        self.fake.portal(portal_id)
        return dict(sorted(self._stats.get(portal_id, Counter()).items()))

    def note(
        self, portal_id: int, op: str, content_type: ContentType, object_id: str, keys: Any
    ) -> None:
        """Log one committed write (what the control API's `write_log` lists)."""
        log = self._log.setdefault(portal_id, [])
        at = iso_ms(self.writer(portal_id).last_ms)
        log.append(
            {
                "seq": len(log) + 1,
                "op": op,
                "type": content_type.value,
                "id": object_id,
                "keys": sorted(keys),
                "at": at,
            }
        )
        self.count(portal_id, f"committed_{op}")

    def log(self, portal_id: int) -> list[dict[str, Any]]:
        """Every committed write of the portal, in order."""
        self.fake.portal(portal_id)
        return [dict(entry) for entry in self._log.get(portal_id, [])]

    # --- people ----------------------------------------------------------------------------

    def person_edit(
        self,
        portal_id: int,
        content_type: ContentType,
        hubspot_id: str,
        fields: dict[str, Any],
        *,
        draft: bool = False,
    ) -> None:
        """A colleague edits an object in HubSpot now (rows: "<tableId>:<rowId>"; cells as
        `values.<column>`); `draft=True` edits the draft (a page's buffer, a table's draft
        row). KeyError when the object does not exist."""
        portal = self.fake.portal(portal_id)
        found = find(portal, content_type, hubspot_id)
        if found is None:
            raise KeyError(f"no {content_type.value} {hubspot_id} in portal {portal_id}")
        collection, slot = found
        current = collection.builder.as_dict(collection.life, slot)
        unknown = [key for key in fields if read_value(current, key, missing=_MISSING) is _MISSING]
        if unknown:
            raise ValueError(f"{content_type.value} {hubspot_id} has no field {unknown[0]!r}")
        writer = self.writer(portal_id)
        if content_type is ContentType.HUBDB_ROW and draft:
            writer.row_draft(found, fields)
        elif draft:
            writer.draft(found, fields)
        else:
            writer.live(content_type, found, fields, PERSON_USER)
        self.note(
            portal_id, "person_draft" if draft else "person", content_type, hubspot_id, fields
        )

    def after_read(self, portal_id: int, content_type: ContentType, ids: list[str]) -> None:
        """People's edits that follow a read of `ids` (the EDIT_AFTER_READ rules)."""
        for rule, object_id in self.plan.edits_after_read(portal_id, content_type, ids):
            portal = self.fake.portal(portal_id)
            found = find(portal, content_type, object_id)
            if found is None:
                continue
            key = rule.field or DEFAULT_PERSON_FIELD
            collection, slot = found
            current = collection.builder.as_dict(collection.life, slot)
            if rule.draft and content_type is ContentType.HUBDB_ROW:
                current = collection.builder.overlay.draft_row(slot, current)
            value = rule.value if rule.value is not None else _edited(read_value(current, key))
            self.person_edit(portal_id, content_type, object_id, {key: value}, draft=rule.draft)
            self.count(portal_id, "fault_edit_after_read")

    def after_read_request(
        self, portal_id: int, content_type: ContentType, request: Request, response: Response
    ) -> None:
        """`after_read` for a by-id or batch read the reads' pipeline (app.py) answered."""
        if response.status_code in (200, 207):
            ids = read_ids(self.fake.portal(portal_id), request)
            self.after_read(portal_id, content_type, ids)

    def unpublished_rows(self, portal_id: int, table: str) -> list[str]:
        """The rows ("<tableId>:<rowId>") whose draft differs from the published table, as
        comparing `rows/draft/batch/read` with `rows/batch/read` shows."""
        portal = self.fake.portal(portal_id)
        found = portal.find_table(table)
        if found is None:
            raise KeyError(f"no table {table} in portal {portal_id}")
        tables = portal.collection(ContentType.HUBDB_TABLE)
        table_id = tables.builder.id_of(found[0])
        rows = portal.collection(ContentType.HUBDB_ROW, found[0])
        changed = []
        for slot in sorted(rows.builder.overlay.row_drafts):
            published = rows.builder.as_dict(rows.life, slot)
            draft = rows.builder.overlay.draft_row(slot, published)
            if _content(draft) != _content(published):
                changed.append(f"{table_id}:{rows.builder.id_of(slot)}")
        return changed


def find(
    portal: PortalModel, content_type: ContentType, hubspot_id: str
) -> tuple[Collection, int] | None:
    """An object by the id the ground truth gives it (rows: "<tableId>:<rowId>")."""
    if content_type is not ContentType.HUBDB_ROW:
        return portal.find_object(content_type, hubspot_id)
    table, _, row = hubspot_id.partition(":")
    found = portal.find_table(table)
    if found is None or found[1]:
        return None
    return portal.find_object(content_type, row, found[0])


def read_ids(portal: PortalModel, request: Request) -> list[str]:
    """The objects a by-id or batch read named (rows: "<tableId>:<rowId>")."""
    inputs = getattr(request.state, "inputs", None)
    ids = list(inputs) if isinstance(inputs, list) else []
    params = request.path_params
    if "objectId" in params:
        ids = [params["objectId"]]
    if "table" not in params:
        return ids
    if "rowId" in params:
        ids = [params["rowId"]]
    found = portal.find_table(params["table"])
    if found is None:
        return []
    prefix = portal.collection(ContentType.HUBDB_TABLE).builder.id_of(found[0])
    return [f"{prefix}:{i}" for i in ids]


def _content(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("updatedAt", "publishedAt")}


def _edited(value: Any) -> Any:
    """What a person changes a value to when the rule names none."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    return f"{value or ''} (edited)"
