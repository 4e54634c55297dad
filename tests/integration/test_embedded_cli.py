"""`smuves db migrate` with no SMUVES_DATABASE_URL starts the embedded PostgreSQL."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from smuves_sync.db.migrations import discover, find_migrations_dir
from tests.support import clean_env, run


@pytest.mark.embedded
async def test_db_migrate_without_a_url_starts_the_embedded_server(tmp_path: Path) -> None:
    # The server runs as another user (pgserver) when the tests run as root: its data directory
    # is not under pytest's base directory, which pytest sessions keep private (0700).
    with tempfile.TemporaryDirectory(prefix="smv") as data:
        done = await run(
            sys.executable,
            "-c",
            "from smuves_sync.cli import main; main()",
            "db",
            "migrate",
            env=clean_env(SMUVES_DATA_DIR=str(Path(data) / "pg")),
            cwd=tmp_path,
        )
        assert done.code == 0, done.stderr
        expected = [f"applied {m.filename}" for m in discover(find_migrations_dir())]
        assert done.stdout.splitlines() == expected
        assert (Path(data) / "pg" / "PG_VERSION").exists()
