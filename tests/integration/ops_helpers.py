"""Shared bits of the operator tests: running the `smuves` command, planting and reading rows."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

from click.testing import CliRunner, Result

from smuves_sync.cli import cli
from smuves_sync.db import Database
from tests.integration.queue_helpers import read


async def smuves(db_url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    """Run `smuves ARGS` against the test's database, off the event loop (the command runs
    its own)."""
    runner = CliRunner()
    full_env = {"SMUVES_DATABASE_URL": db_url, "COLUMNS": "200", **(env or {})}
    return await asyncio.to_thread(runner.invoke, cli, list(args), env=full_env)


def json_out(result: Result) -> Any:
    """The command's stdout as JSON, after checking it succeeded."""
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return json.loads(result.stdout)


async def db_now(db: Database) -> datetime:
    """The database's clock."""
    [row] = await read(db.pool, "opscheck_db_now")
    now: datetime = row["now"]
    return now
