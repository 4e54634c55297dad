"""The rules of a push, item by item: what to write, what is a conflict, what counts as applied.

HubSpot has no ETag, If-Match or version on CMS writes, so these are ours (DESIGN §6). The base
is the stored version the changeset was made from: its HubSpot `updated` text
(`base_updated`) and the values of the fields the item changes (`before`).

- Before a write, HubSpot's object as it is now decides (`plan`): gone → `failed`; already
  showing every new value → nothing to send; `updated` moved since the base *and* a field the
  item changes differs from the base → `conflict`, not written; otherwise written (rebased
  when `updated` moved but those fields are untouched).
- An item whose batch may have been sent already (its intent is open: a lost answer, a
  worker killed) is never sent again blindly (`plan` with `seen`): showing the new values, it
  is applied; showing the base values, unchanged since it was read before that write (same
  `updated`), it is sent again; anything else is a conflict.
- After a write, the read back decides (`verdict`): applied only when HubSpot shows every new
  value.

Fields are top-level keys, or `values.<column>` of a HubDB row: a nested field is sent whole,
its freshest read with the item's columns set (`body`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from smuves_sync.db.push import PushItem

_NESTED = "values."


def field_value(raw: Mapping[str, Any], key: str) -> Any:
    """The value of a field (`values.<column>`: a HubDB cell) in a HubSpot object."""
    if key.startswith(_NESTED):
        values = raw.get("values")
        return values.get(key[len(_NESTED) :]) if isinstance(values, Mapping) else None
    return raw.get(key)


def updated_of(raw: Mapping[str, Any]) -> str | None:
    """HubSpot's own `updated` (pages, posts, authors, tags) or `updatedAt` text."""
    value = raw.get("updated", raw.get("updatedAt"))
    return None if value is None else str(value)


def shows(raw: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether the object holds every value of `wanted`."""
    return all(field_value(raw, key) == value for key, value in wanted.items())


def touched(item: PushItem, raw: Mapping[str, Any]) -> list[str]:
    """The fields the item changes whose value in HubSpot differs from the base's."""
    return [k for k in item.fields if field_value(raw, k) != item.before.get(k)]


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do with one item now: `write` it (with `body`), or settle it as `state`."""

    action: str  # write, applied, conflict, failed
    reason: str | None = None
    body: Mapping[str, Any] | None = None
    rebased: bool = False


def plan(item: PushItem, now: Mapping[str, Any] | None, seen: str | bool | None = False) -> Plan:
    """What to do with `item`, HubSpot's object being `now` (None: HubSpot no longer holds
    it). `seen`: False for an item no write has been sent for; else the `updated` HubSpot
    showed just before a write whose outcome is unknown (its intent is open)."""
    if now is None:
        return Plan("failed", "HubSpot no longer holds the object")
    if shows(now, item.fields):
        return Plan("applied")
    moved = updated_of(now) != item.base_updated
    changed = touched(item, now)
    if seen is not False:
        if changed or updated_of(now) != seen:
            return Plan("conflict", _conflict_words(item, now, changed, lost=True))
        return Plan("write", body=body(item, now), rebased=moved)
    if moved and changed:
        return Plan("conflict", _conflict_words(item, now, changed, lost=False))
    return Plan("write", body=body(item, now), rebased=moved)


def body(item: PushItem, now: Mapping[str, Any]) -> dict[str, Any]:
    """What to send: the changed top-level fields; a HubDB row's `values` whole, as HubSpot
    holds them now with the item's columns set."""
    out: dict[str, Any] = {}
    for key, value in item.fields.items():
        if key.startswith(_NESTED):
            current = now.get("values")
            values = out.setdefault("values", dict(current) if isinstance(current, Mapping) else {})
            values[key[len(_NESTED) :]] = value
        else:
            out[key] = value
    return out


def verdict(item: PushItem, back: Mapping[str, Any] | None, refused: str | None) -> Plan:
    """An item after its write, HubSpot's object being `back` as read back: applied when it
    shows every new value; else failed, with HubSpot's reason when it gave one."""
    if back is not None and shows(back, item.fields):
        return Plan("applied")
    if refused is not None:
        return Plan("failed", refused)
    if back is None:
        return Plan("failed", "HubSpot no longer holds the object")
    missing = [k for k in item.fields if field_value(back, k) != item.fields[k]]
    return Plan("failed", f"HubSpot does not show the new value of {', '.join(missing)}")


def _conflict_words(
    item: PushItem, now: Mapping[str, Any], changed: list[str], *, lost: bool
) -> str:
    if not changed:
        return "changed in HubSpot since the write whose answer was lost; not sent again"
    key = changed[0]
    said = f"{key} changed in HubSpot since the base ({_short(item.before.get(key))} → "
    said += f"{_short(field_value(now, key))})"
    if len(changed) > 1:
        said += f" and {len(changed) - 1} more field(s)"
    return said + ("; not sent again" if lost else "")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
