"""What writes leave behind: an overlay over the generated objects of one collection.

Generated objects are never stored, so a write is kept as the top-level keys it set (HubDB
rows: `values.<column>` per cell as well) over what the builder generates, with the moment it
was made. `Builder.as_dict` and `Builder.updated_ms` consult the overlay, so listings, reads,
filters, sorts by `updatedAt` and the ground truth all see the writes.

When a version step (`advance`) edits an object after a write, the step is the later writer:
a key the step regenerated differently wins over the written value, the others keep it.

The same overlay holds the draft side of the collection: a page's or post's draft buffer
(`PageDraft`, a whole copy of the object taken when the draft is first written) and a HubDB
row's draft edits (an `Edit` over the published row), and the revisions of pages and posts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from smuves_sync.testing.fake_hubspot.text import iso_ms

if TYPE_CHECKING:
    from smuves_sync.testing.fake_hubspot.content import Builder
    from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle

# Who a revision names: the private app's writes and a colleague's edits in HubSpot's editor.
API_USER = {"id": "9100", "email": "private-app@example.com", "fullName": "Private app"}
PERSON_USER = {"id": "9002", "email": "robin.haas@example.com", "fullName": "Robin Haas"}
SEED_USER = {"id": "9001", "email": "editor@example.com", "fullName": "Alex Morgan"}


@dataclass(slots=True)
class Edit:
    """The keys written over one generated object, and when it was last written."""

    revision: int  # the lifecycle revision of the slot the keys were written against
    fields: dict[str, Any]
    updated_ms: int


@dataclass(slots=True)
class PageDraft:
    """A page's or post's draft buffer: a whole object, as HubSpot keeps one."""

    obj: dict[str, Any]
    updated_ms: int


@dataclass(frozen=True, slots=True)
class Revision:
    """One version of a page or post (`PageVersion`): the object as it was then, kept as its
    JSON text (a fraction of the dict's memory, for portals of many written pages)."""

    number: int
    updated_ms: int
    user: dict[str, str]
    text: str

    @property
    def obj(self) -> dict[str, Any]:
        """The object of this version."""
        parsed: dict[str, Any] = json.loads(self.text)
        return parsed


def read_value(obj: dict[str, Any], key: str, missing: Any = None) -> Any:
    """A top-level value, or a row's cell for `values.<column>` (`missing` when absent)."""
    if key.startswith("values.") and isinstance(obj.get("values"), dict):
        return obj["values"].get(key[len("values.") :], missing)
    return obj.get(key, missing)


def merged(obj: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """`obj` with `fields` written over it (a new dict; nested values replaced, never mutated)."""
    out = dict(obj)
    cells: dict[str, Any] = {}
    for key, value in fields.items():
        if key.startswith("values."):
            cells[key[len("values.") :]] = value
        else:
            out[key] = value
    if cells:
        out["values"] = {**out.get("values", {}), **cells}
    return out


@dataclass
class Overlay:
    """The writes of one collection (a content type of a portal, or one table's rows)."""

    edits: dict[int, Edit] = field(default_factory=dict)
    drafts: dict[int, PageDraft] = field(default_factory=dict)
    row_drafts: dict[int, Edit] = field(default_factory=dict)
    revisions: dict[int, list[Revision]] = field(default_factory=dict)

    def updated_ms(self, slot: int, generated_ms: int) -> int:
        """The served update time: the later of the generated one and the last write."""
        edit = self.edits.get(slot)
        return generated_ms if edit is None else max(generated_ms, edit.updated_ms)

    def apply(
        self, builder: Builder, life: Lifecycle, slot: int, obj: dict[str, Any]
    ) -> dict[str, Any]:
        """The generated `obj` with this slot's writes over it."""
        edit = self.edits.get(slot)
        if edit is None:
            return obj
        current = life.revision[slot]
        if edit.revision != current:
            # A version step edited the object since the write: what it changed wins.
            life.revision[slot] = edit.revision
            try:
                then = {**builder.variable(life, slot), **builder.constant}
            finally:
                life.revision[slot] = current
            for key in [k for k in edit.fields if read_value(obj, k) != read_value(then, k)]:
                del edit.fields[key]
            edit.revision = current
        return merged(obj, edit.fields)

    def write(self, life: Lifecycle, slot: int, fields: dict[str, Any], at_ms: int) -> None:
        """Commit `fields` over the live (published) object, dated `at_ms`."""
        edit = self.edits.get(slot)
        if edit is None:
            edit = self.edits[slot] = Edit(life.revision[slot], {}, at_ms)
        edit.fields.update(fields)
        edit.updated_ms = max(edit.updated_ms, at_ms)
        life.generation += 1  # cached listing views (filters, sorts by updatedAt) are stale

    def record_revision(
        self,
        slot: int,
        before: dict[str, Any] | None,
        after: dict[str, Any],
        at_ms: int,
        user: dict[str, str],
    ) -> None:
        """Add a version; the first write also records the version it replaced (`before`)."""
        versions = self.revisions.setdefault(slot, [])
        if not versions and before is not None:
            versions.append(Revision(1, _updated_of(before), SEED_USER, json.dumps(before)))
        versions.append(Revision(len(versions) + 1, at_ms, user, json.dumps(after)))

    def versions(self, slot: int, current: Callable[[], dict[str, Any]]) -> list[Revision]:
        """Newest first; an object never written has one version, the one served now."""
        versions = self.revisions.get(slot)
        if not versions:
            obj = current()
            return [Revision(1, _updated_of(obj), SEED_USER, json.dumps(obj))]
        return list(reversed(versions))

    def draft_row(self, slot: int, published: dict[str, Any]) -> dict[str, Any]:
        """A row as the table's draft holds it: the published row, or its draft edits over it."""
        edit = self.row_drafts.get(slot)
        if edit is None:
            return published
        row = merged(published, edit.fields)
        row["updatedAt"] = iso_ms(edit.updated_ms)
        return row

    def write_row_draft(self, slot: int, fields: dict[str, Any], at_ms: int) -> None:
        """Commit `fields` to a row of the table's draft."""
        edit = self.row_drafts.get(slot)
        if edit is None:
            edit = self.row_drafts[slot] = Edit(0, {}, at_ms)
        edit.fields.update(fields)
        edit.updated_ms = max(edit.updated_ms, at_ms)


def _updated_of(obj: dict[str, Any]) -> int:
    text = str(obj.get("updated") or obj.get("updatedAt") or "1970-01-01T00:00:00Z")
    return round(datetime.fromisoformat(text).timestamp() * 1000)
