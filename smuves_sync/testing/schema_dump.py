"""The catalog of a migrated database as text: what migrations/schema.sql holds.

    text = dump_schema(url)    # pg_dump --schema-only, the lines that differ between runs gone

``make schema`` writes it for a freshly migrated scratch database (scripts/dump_schema.py); the
tests compare a new database's and an upgraded one's with the committed file.
"""

from __future__ import annotations

import re
import subprocess

# pg_dump's \restrict key is random for each dump; its header names the server's version.
_VOLATILE = re.compile(r"^(\\restrict |\\unrestrict |-- Dumped (from|by) ).*\n", re.M)


def dump_schema(url: str) -> str:
    """`pg_dump --schema-only` of the database at `url`, without its volatile lines."""
    done = subprocess.run(
        ["pg_dump", "--schema-only", "--dbname", url],
        check=True,
        capture_output=True,
        text=True,
    )
    return _VOLATILE.sub("", done.stdout)
