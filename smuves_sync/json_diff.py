"""A field-level diff of two JSON documents: each changed field by its JSON path, old → new;
long text (HTML bodies) also as a unified text diff.

    for change in diff_documents(old, new):
        change.path        # '$.widgets.title.body.html', '$.tagIds[1]', '$["a key"]'
        change.kind        # 'added', 'removed' or 'changed'
        change.old, change.new       # the values (None where the field is absent)
        change.text_diff   # the unified diff's lines, for long text; None otherwise

Objects are compared key by key (the old document's key order, then keys only the new one
has), arrays index by index, anything else by value and JSON type (1 and true differ). A
string becomes a text diff when either side is longer than `LONG_TEXT` or spans lines; HTML
written on one line (HubSpot's usually is) is split where one tag ends and the next begins,
so a changed paragraph shows as one changed line rather than the whole body.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

# Longer strings (or strings over several lines) are shown as a unified diff too.
LONG_TEXT = 120
# Context lines around each change of a text diff.
CONTEXT_LINES = 1

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_BETWEEN_TAGS = re.compile(r"(?<=>)(?=<)")

ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field that differs between two documents."""

    path: str
    kind: ChangeKind
    old: Any
    new: Any
    text_diff: tuple[str, ...] | None = None


def json_path(parent: str, key: str | int) -> str:
    """The path of `key` under `parent`: '.name', '[3]', or '["odd key"]'."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"


def _same(old: Any, new: Any) -> bool:
    # JSON tells true from 1 and 1.0 from 1 only by type; Python's == does not.
    return type(old) is type(new) and old == new


def _text_lines(text: str) -> list[str]:
    return [part for line in text.splitlines() for part in _BETWEEN_TAGS.split(line)]


def _is_long(value: Any) -> bool:
    return isinstance(value, str) and (len(value) > LONG_TEXT or "\n" in value)


def text_diff(old: str, new: str, *, old_label: str = "old", new_label: str = "new") -> list[str]:
    """The unified diff of two texts, HTML split between adjacent tags."""
    return list(
        difflib.unified_diff(
            _text_lines(old),
            _text_lines(new),
            fromfile=old_label,
            tofile=new_label,
            lineterm="",
            n=CONTEXT_LINES,
        )
    )


def _walk(old: Any, new: Any, path: str, labels: tuple[str, str]) -> Iterator[FieldChange]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key in new:
                yield from _walk(value, new[key], json_path(path, key), labels)
            else:
                yield FieldChange(json_path(path, key), "removed", value, None)
        for key, value in new.items():
            if key not in old:
                yield FieldChange(json_path(path, key), "added", None, value)
        return
    if isinstance(old, list) and isinstance(new, list):
        for index, (before, after) in enumerate(zip(old, new, strict=False)):
            yield from _walk(before, after, json_path(path, index), labels)
        for index in range(len(new), len(old)):
            yield FieldChange(json_path(path, index), "removed", old[index], None)
        for index in range(len(old), len(new)):
            yield FieldChange(json_path(path, index), "added", None, new[index])
        return
    if _same(old, new):
        return
    lines = None
    if isinstance(old, str) and isinstance(new, str) and (_is_long(old) or _is_long(new)):
        lines = tuple(text_diff(old, new, old_label=labels[0], new_label=labels[1]))
    yield FieldChange(path, "changed", old, new, lines)


def diff_documents(
    old: Any, new: Any, *, old_label: str = "old", new_label: str = "new"
) -> list[FieldChange]:
    """Every field that differs from `old` to `new`, in document order. An absent document
    (None) counts as an empty object, so every field of the other is added or removed. The
    labels head the text diffs (e.g. 'version 3', 'version 4')."""
    before = {} if old is None else old
    after = {} if new is None else new
    return list(_walk(before, after, "$", (old_label, new_label)))
