"""`smuves db migrate` with no SMUVES_DATABASE_URL starts the embedded PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from smuves_sync.db.migrations import discover, find_migrations_dir


@pytest.mark.embedded
async def test_db_migrate_without_a_url_starts_the_embedded_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env["SMUVES_DATA_DIR"] = str(tmp_path / "pg")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from smuves_sync.cli import main; main()",
        "db",
        "migrate",
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    expected = [f"applied {m.filename}" for m in discover(find_migrations_dir())]
    assert out.decode().splitlines() == expected
    assert (tmp_path / "pg" / "PG_VERSION").exists()
