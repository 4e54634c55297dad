"""Write migrations/schema.sql: the catalog of a freshly migrated database (``make schema``).

    .venv/bin/python scripts/dump_schema.py [--database-url URL]

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL, else
the embedded PostgreSQL in a temporary directory. pg_dump must be on PATH, of the server's
major version or newer.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from smuves_sync.testing.schema_dump import dump_schema
from smuves_sync.testing.scratch import scratch_database, scratch_server

SNAPSHOT = Path(__file__).resolve().parents[1] / "migrations" / "schema.sql"


async def main(database_url: str | None) -> None:
    """Migrate a scratch database and write its catalog to migrations/schema.sql."""
    async with (
        scratch_server(database_url) as server_url,
        scratch_database(server_url, prefix="smuves_schema") as url,
    ):
        SNAPSHOT.write_text(dump_schema(url), encoding="utf-8")
    print(f"wrote {SNAPSHOT.name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=os.environ.get("SMUVES_DATABASE_URL"))
    asyncio.run(main(parser.parse_args().database_url))
