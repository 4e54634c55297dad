"""`smuves dashboard`: refuses to listen beyond localhost unprotected; prints a login link."""

from __future__ import annotations

import asyncio
import re
import sys

import httpx
from click.testing import CliRunner

from smuves_sync.cli import cli
from smuves_sync.db import Database
from smuves_sync.db.operator_actions import operator_action_recent


def test_beyond_localhost_without_a_password_it_does_not_start() -> None:
    result = CliRunner().invoke(
        cli,
        ["dashboard", "--host", "0.0.0.0", "--port", "0"],
        env={"SMUVES_DASHBOARD_PASSWORD": None, "SMUVES_DASHBOARD_TOKEN": None},
    )
    assert result.exit_code == 2
    assert "SMUVES_DASHBOARD_PASSWORD" in result.output


def test_a_short_password_is_refused() -> None:
    result = CliRunner().invoke(
        cli, ["dashboard", "--port", "0"], env={"SMUVES_DASHBOARD_PASSWORD": "short"}
    )
    assert result.exit_code == 2 and "at least 16 characters" in result.output


async def test_it_prints_a_link_that_signs_in_and_stops_on_sigterm(
    db_url: str, db: Database
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smuves_sync.cli",
        "dashboard",
        "--port",
        "0",
        env={"SMUVES_DATABASE_URL": db_url, "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        link = None
        while link is None:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, "smuves dashboard exited without printing its link"
            found = re.search(r"(http://127\.0\.0\.1:\d+)/login\?token=(\S+)", line)
            if found:
                link = found
                assert "works once, for 15 minutes; restart for a new one" in line
        base, token = link.group(1), link.group(2)
        async with httpx.AsyncClient(base_url=base) as client:
            assert (await client.get("/")).headers["location"] == "/login"
            # A forwarded-for header does not change the address the dashboard goes by.
            signed = await client.post(
                "/login",
                data={"token": token, "actor": "ada"},
                headers={"Origin": base, "X-Forwarded-For": "203.0.113.9"},
            )
            assert signed.status_code == 303
            (row,) = await operator_action_recent(db)
            assert (row.action, row.client) == ("sign_in", "127.0.0.1")
            assert (await client.get("/")).status_code == 200
        # SIGTERM stops it cleanly (its pool closed, an embedded database let go): exit 0.
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
