"""The named queries of the test and benchmark aids, from ``smuves_sync/testing/sql/*.sql``.

The same format and loader as the product's queries (`smuves_sync.db.queries`), kept apart so
that the product's query set holds only what the product runs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import LiteralString

from smuves_sync.db.queries import load_queries

SQL_DIR = Path(__file__).with_name("sql")


@functools.cache
def testing_queries() -> Mapping[str, LiteralString]:
    """The aids' named queries (read from disk on first use, then cached)."""
    return load_queries(SQL_DIR)
