"""Running commands: `smuves` in this process or as a subprocess, and any program to its end.

result = await invoke(db_url, "stats", "--json")          # click's runner, off the loop
rows = json_out(result)
env = smuves_env(db_url, base_url)                         # a subprocess's environment
done = await smuves(env, "sync", "7001")                   # exit code, stdout, stderr
done = await run(sys.executable, "scripts/x.py", "--json") # any program
figures = await benchmark_figures("bench_queue.py", pg_server, "--jobs", "40")
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from smuves_sync.cli import cli
from smuves_sync.token_crypto import new_secret_key
from tests.support.logins import runtime_env

# The key the tests' portal tokens are encrypted with.
SECRET = new_secret_key()
# A HubSpot base URL where nothing listens, for work that must not reach HubSpot.
NOWHERE = "http://127.0.0.1:9"
SCRIPTS = Path(__file__).parents[2] / "scripts"


@dataclass(frozen=True)
class Finished:
    """A finished process: its exit code and what it printed."""

    code: int
    stdout: str
    stderr: str


async def run(
    *argv: str | bytes,
    env: dict[str, str] | None = None,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Finished:
    """Run `argv` to its end (killed after `timeout` seconds, failing the test)."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    sent = stdin.encode() if isinstance(stdin, str) else stdin
    try:
        out, err = await asyncio.wait_for(proc.communicate(sent), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return Finished(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


def clean_env(**values: str) -> dict[str, str]:
    """This process's environment without any SMUVES_ setting, plus `values`; a `smuves`
    started with it reads no env file (a playground .env in the checkout stays out)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env.update({"SMUVES_ENV_FILE": "", **values})
    return env


def smuves_env(db_url: str, base_url: str = NOWHERE, **extra: str) -> dict[str, str]:
    """The environment of a `smuves` subprocess: this test's database and fake, quick timings
    (`extra` adds or overrides)."""
    quick = {
        "SMUVES_DATABASE_URL": db_url,
        **runtime_env(db_url),
        "SMUVES_HUBSPOT_BASE_URL": base_url,
        "SMUVES_SECRET_KEY": SECRET,
        "SMUVES_POLL_INTERVAL_SECONDS": "0.2",
        "SMUVES_BACKOFF_BASE_SECONDS": "0.05",
        "SMUVES_BACKOFF_MAX_SECONDS": "0.5",
        "SMUVES_HUBSPOT_MAX_RETRIES": "1",
        "SMUVES_SHUTDOWN_GRACE_SECONDS": "5",
        "COLUMNS": "200",
    }
    return clean_env(**{**quick, **extra})


async def smuves(
    env: dict[str, str], *args: str | bytes, stdin: str | bytes | None = None, timeout: float = 120
) -> Finished:
    """Run `smuves ARGS…` as a subprocess, to its end."""
    return await run(
        sys.executable, "-m", "smuves_sync.cli", *args, env=env, stdin=stdin, timeout=timeout
    )


async def invoke(db_url: str, *args: str, env: Mapping[str, str | None] | None = None) -> Result:
    """Run `smuves ARGS` in this process against the test's database, off the event loop (the
    command runs its own)."""
    runner = CliRunner()
    full_env = {"SMUVES_DATABASE_URL": db_url, "COLUMNS": "200", **(env or {})}
    return await asyncio.to_thread(runner.invoke, cli, list(args), env=full_env)


async def benchmark_figures(
    script: str, database_url: str, *args: str, timeout: float = 120
) -> dict[str, Any]:
    """Run the benchmark scripts/`script` with `args`, `--json` and `--database-url
    database_url` to its end, which must be a success; the figures of the JSON line it
    prints last."""
    done = await run(
        sys.executable,
        str(SCRIPTS / script),
        *args,
        *("--json", "--database-url", database_url),
        timeout=timeout,
    )
    assert done.code == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def json_out(result: Result) -> Any:
    """The command's stdout as JSON, after checking it succeeded."""
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return json.loads(result.stdout)
