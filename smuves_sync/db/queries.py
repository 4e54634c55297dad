"""Named SQL queries, loaded once from the ``.sql`` files in ``smuves_sync/db/queries/``.

A file holds blocks that each start with a ``-- name: noun_verb`` line; the block's text up to
the next marker is the query (leading comment lines are kept: PostgreSQL ignores them). Every
file of the directory is merged into one mapping, so a new area adds a file (``content.sql``,
``exports.sql``) and nothing else::

    from smuves_sync.db.queries import queries
    await conn.execute(queries()["job_claim"], {"worker": "w1", ...})

Parameters are psycopg named placeholders (``%(name)s``); a literal ``%`` is written ``%%``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import LiteralString

QUERY_DIR = Path(__file__).with_name("queries")
_MARKER = re.compile(r"^--\s*name:\s*(?P<name>[a-z][a-z0-9_]*)\s*(?:--)?\s*$", re.MULTILINE)


class QueryFileError(ValueError):
    """A named-query file is malformed (text before the first name, a duplicate name)."""


def parse_queries(text: str, source: str) -> dict[str, LiteralString]:
    """Split one file's text into ``{name: sql}``."""
    markers = list(_MARKER.finditer(text))
    head = text[: markers[0].start()] if markers else text
    if any(line.strip() and not line.lstrip().startswith("--") for line in head.splitlines()):
        raise QueryFileError(f"{source}: SQL before the first '-- name:' line")
    found: dict[str, LiteralString] = {}
    for marker, following in zip(markers, [*markers[1:], None], strict=True):
        name = marker.group("name")
        body = text[marker.end() : following.start() if following else len(text)].strip()
        if name in found:
            raise QueryFileError(f"{source}: query {name!r} defined twice")
        if not body:
            raise QueryFileError(f"{source}: query {name!r} is empty")
        # The text comes from our own files, never from input: that is what LiteralString means
        # (mypy does not tell LiteralString from str; pyright would want a cast here).
        found[name] = body
    return found


def load_queries(directory: Path) -> Mapping[str, LiteralString]:
    """Merge every ``*.sql`` file of `directory` into one read-only mapping."""
    merged: dict[str, LiteralString] = {}
    for path in sorted(directory.glob("*.sql")):
        for name, body in parse_queries(path.read_text(encoding="utf-8"), path.name).items():
            if name in merged:
                raise QueryFileError(f"{path.name}: query {name!r} is also defined elsewhere")
            merged[name] = body
    return MappingProxyType(merged)


@functools.cache
def queries() -> Mapping[str, LiteralString]:
    """The package's named queries (read from disk on first use, then cached)."""
    return load_queries(QUERY_DIR)
