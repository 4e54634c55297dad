"""Serving poisoned objects: one object of a listing spoilt the way HubSpot's data can be.

A poisoned slot is served by `served_json` instead of its builder's JSON: NUL characters and
lone surrogates travel as JSON escapes (``\\u0000``, ``\\ud800``), the only way they can, and
a duplicated object is served twice in a row, so both copies land in the same page (that page
holds one object more than its limit). `served_dicts` gives the same objects as dicts; the one
a store should keep for the slot is the last of them (a duplicate's second copy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smuves_sync.models import ContentType
from smuves_sync.testing.fake_hubspot.content import Builder, encode_json
from smuves_sync.testing.fake_hubspot.lifecycle import Lifecycle
from smuves_sync.testing.fake_hubspot.spec import PoisonKind

# Fields left alone when a text is picked to spoil: ids, names and anything a listing is walked
# by (a HubDB table's `name` names it in the rows' path).
_KEPT = frozenset({"id", "name", "label", "slug", "path", "url", "state", "currentState"})
NUL_KEY = "note\x00key"
SECOND_COPY = " (second copy)"


def _name_key(content_type: ContentType, obj: Mapping[str, Any]) -> str:
    """The key the product reads the object's name from (a HubDB table's is its label)."""
    return next(k for k in content_type.spec.fields.name if k in obj)


def _splice(text: str, inserted: str) -> str:
    middle = len(text) // 2
    return text[:middle] + inserted + text[middle:]


def _longest_text(obj: Any, depth: int = 0) -> tuple[int, list[Any]] | None:
    """(length, path) of the longest string, nested ones first, never under a `_KEPT` key at
    the top."""
    best: tuple[int, list[Any]] | None = None
    items: list[tuple[Any, Any]]
    if isinstance(obj, dict):
        items = [(k, v) for k, v in obj.items() if not (depth == 0 and k in _KEPT)]
    elif isinstance(obj, list):
        items = list(enumerate(obj))
    else:
        return None
    for key, value in items:
        if isinstance(value, str):
            # A nested text outranks any top-level one, then the longer wins.
            found: tuple[int, list[Any]] | None = (len(value) + (depth > 0) * 10**9, [key])
        else:
            inner = _longest_text(value, depth + 1)
            found = (inner[0], [key, *inner[1]]) if inner else None
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return best


def _spoil_text(obj: dict[str, Any], inserted: str) -> None:
    found = _longest_text(obj)
    if found is None:
        obj["htmlTitle"] = inserted
        return
    *parents, last = found[1]
    holder: Any = obj
    for key in parents:
        holder = holder[key]
    holder[last] = _splice(holder[last], inserted)


def poisoned(
    kind: PoisonKind, content_type: ContentType, original: dict[str, Any]
) -> list[dict[str, Any]]:
    """The objects served in the place of `original`, in order (two for a duplicate)."""
    obj = json.loads(json.dumps(original))  # a deep copy: builders share constant parts
    name_key = _name_key(content_type, obj)
    if kind is PoisonKind.NUL_IN_BODY:
        _spoil_text(obj, "\x00")
    elif kind is PoisonKind.NUL_IN_KEY:
        obj[NUL_KEY] = "a key with a NUL in it"
    elif kind is PoisonKind.NUL_IN_NAME:
        obj[name_key] = _splice(obj[name_key], "\x00")
    elif kind is PoisonKind.LONE_SURROGATE:
        obj[name_key] = _splice(obj[name_key], "\ud800")
        _spoil_text(obj, "\udfff")
    elif kind in (PoisonKind.DUPLICATE_ID, PoisonKind.NUMERIC_ID):
        copy = {**obj, name_key: obj[name_key] + SECOND_COPY}
        if kind is PoisonKind.NUMERIC_ID:
            copy["id"] = int(obj["id"])
        return [obj, copy]
    elif kind is PoisonKind.NO_ID:
        del obj["id"]
    elif kind is PoisonKind.BAD_FIELD:
        obj[name_key] = 12345
    return [obj]


def served_json(
    poisons: Mapping[int, PoisonKind], builder: Builder, life: Lifecycle, slot: int
) -> list[str]:
    """What a listing serves for `slot`: its JSON, or its poisoned objects' JSON."""
    kind = poisons.get(slot)
    if kind is None:
        return [builder.as_json(life, slot)]
    original = builder.as_dict(life, slot)
    return [encode_json(obj) for obj in poisoned(kind, builder.content_type, original)]


def served_dicts(
    poisons: Mapping[int, PoisonKind], builder: Builder, life: Lifecycle, slot: int
) -> list[dict[str, Any]]:
    """The objects a listing serves for `slot` (two for a duplicate, the last one wins)."""
    kind = poisons.get(slot)
    original = builder.as_dict(life, slot)
    return [original] if kind is None else poisoned(kind, builder.content_type, original)
