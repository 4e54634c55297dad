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

The text diffs of one document are bounded together (`MAX_DIFF_CHARS`, `MAX_DIFF_LINES`, both
sides of every field counted): a field past what is left has, instead of its unified diff,
one line saying it is too large to show a line diff, with its sizes. Its change (old → new)
is listed all the same.
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
# What the text diffs of one document may compare in all (both sides, every field). difflib's
# matcher grows faster than the square of the lines it compares: lines that repeat just too
# rarely for its autojunk rule (each under 1% of them), every other one changed, took 0.1 to
# 0.4 s at 1,000 lines a side, 0.3 to 0.9 s at 1,500 and 0.7 to 1.7 s at 2,000 on two busy
# cores (scripts/bench_json_diff.py). The bound is on the sum, so many long fields cost no
# more than one field of that size.
MAX_DIFF_LINES = 2_000
# Characters bound what the lines hold (and the diff's answer): a single line of a megabyte
# costs difflib nothing, but is shown whole.
MAX_DIFF_CHARS = 400_000
TOO_LARGE = "too large to show a line diff"

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
    """The unified diff of two texts, HTML split between adjacent tags; one line saying it is
    too large past `MAX_DIFF_CHARS` or `MAX_DIFF_LINES`."""
    return list(_Budget((old_label, new_label)).line_diff(old, new))


def _unified(before: list[str], after: list[str], old_label: str, new_label: str) -> Iterator[str]:
    return difflib.unified_diff(
        before, after, fromfile=old_label, tofile=new_label, lineterm="", n=CONTEXT_LINES
    )


@dataclass(slots=True)
class _Budget:
    """What is left for the text diffs of one document, and its labels."""

    labels: tuple[str, str]
    chars: int = MAX_DIFF_CHARS
    lines: int = MAX_DIFF_LINES

    def line_diff(self, old: str, new: str) -> tuple[str, ...]:
        """The unified diff of `old` and `new` if it fits what is left (then spent), else the
        line saying it is too large."""
        chars = len(old) + len(new)
        if chars > self.chars:
            sizes = f"{len(old):,} and {len(new):,} characters"
            return (self._too_large(sizes),)
        before, after = _text_lines(old), _text_lines(new)
        lines = len(before) + len(after)
        if lines > self.lines:
            sizes = f"{len(before):,} and {len(after):,} lines"
            return (self._too_large(sizes),)
        self.chars -= chars
        self.lines -= lines
        old_label, new_label = self.labels
        return tuple(_unified(before, after, old_label, new_label))

    def _too_large(self, sizes: str) -> str:
        spent = ""
        if self.chars < MAX_DIFF_CHARS:
            spent = (
                f", of which the fields before it took {MAX_DIFF_CHARS - self.chars:,} "
                f"characters and {MAX_DIFF_LINES - self.lines:,} lines"
            )
        return (
            f"{TOO_LARGE}: {sizes} (the line diffs of one document compare at most "
            f"{MAX_DIFF_CHARS:,} characters and {MAX_DIFF_LINES:,} lines in all{spent})"
        )


def _walk(old: Any, new: Any, path: str, budget: _Budget) -> Iterator[FieldChange]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key in new:
                yield from _walk(value, new[key], json_path(path, key), budget)
            else:
                yield FieldChange(json_path(path, key), "removed", value, None)
        for key, value in new.items():
            if key not in old:
                yield FieldChange(json_path(path, key), "added", None, value)
        return
    if isinstance(old, list) and isinstance(new, list):
        for index, (before, after) in enumerate(zip(old, new, strict=False)):
            yield from _walk(before, after, json_path(path, index), budget)
        for index in range(len(new), len(old)):
            yield FieldChange(json_path(path, index), "removed", old[index], None)
        for index in range(len(old), len(new)):
            yield FieldChange(json_path(path, index), "added", None, new[index])
        return
    if _same(old, new):
        return
    lines = None
    if isinstance(old, str) and isinstance(new, str) and (_is_long(old) or _is_long(new)):
        lines = budget.line_diff(old, new)
    yield FieldChange(path, "changed", old, new, lines)


def diff_documents(
    old: Any, new: Any, *, old_label: str = "old", new_label: str = "new"
) -> list[FieldChange]:
    """Every field that differs from `old` to `new`, in document order. An absent document
    (None) counts as an empty object, so every field of the other is added or removed. The
    labels head the text diffs (e.g. 'version 3', 'version 4')."""
    before = {} if old is None else old
    after = {} if new is None else new
    return list(_walk(before, after, "$", _Budget((old_label, new_label))))
