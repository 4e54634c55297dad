"""The playground `make demo` leaves: its settings in .env, `make fake` serving the same portal at
the same address, and `smuves sync 1001` working right after."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from dotenv import dotenv_values
from pydantic import SecretStr
from rich.console import Console

from smuves_sync.cli.common import ExitCode
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec, ServerConfig, serve_in_thread
from smuves_sync.token_crypto import new_secret_key
from tests.integration.test_demo import DEMO, load_demo
from tests.support import free_port, run, smuves
from tests.support.logins import runtime_env, runtime_urls


def _env(env_path: Path) -> dict[str, str]:
    """A shell with no SMUVES_ variable but the env file's location."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    env["SMUVES_ENV_FILE"] = str(env_path)
    return env


@asynccontextmanager
async def make_fake(env_path: Path) -> AsyncIterator[str]:
    """`make fake` (scripts/demo.py --serve-fake) reading `env_path`; its base URL."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(DEMO),
        "--serve-fake",
        env={**_env(env_path), "COLUMNS": "300"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(60):
            line = (await process.stdout.readline()).decode()
        assert "serving at http://" in line, line
        yield line.split("serving at ", 1)[1].split(";", 1)[0].strip()
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            code = await process.wait()
    assert code == 0


def test_the_playground_settings_are_what_the_commands_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = load_demo()
    env_path = tmp_path / ".env"
    used = demo.playground_settings(Settings(data_dir=tmp_path / "pg"))
    demo.write_playground(env_path, used, "http://127.0.0.1:8711", 0.5)
    monkeypatch.setenv("SMUVES_ENV_FILE", str(env_path))
    for name in ("SMUVES_SECRET_KEY", "SMUVES_JWT_SECRET", "SMUVES_JWT_AUDIENCE"):
        monkeypatch.delenv(name, raising=False)

    from smuves_sync.cli.session import load_settings

    read = load_settings()
    assert read.data_dir == tmp_path / "pg" and read.database_url is None
    assert read.hubspot_base_url == "http://127.0.0.1:8711"
    assert read.hubspot_token is not None
    assert read.hubspot_token.get_secret_value() == demo.DEMO_TOKEN
    assert read.secret_key == used.secret_key and read.jwt_secret == used.jwt_secret
    assert read.jwt_audience == "authenticated"
    # Run again, the demo keeps the key its portal's token is stored under.
    assert demo.playground_settings(read).secret_key == used.secret_key


def test_the_closing_lines_say_what_to_run_next(tmp_path: Path) -> None:
    demo = load_demo()
    output = io.StringIO()
    demo.print_playground(Console(file=output, width=200), tmp_path / ".env", "http://x:1")
    text = output.getvalue()
    for expected in ("make fake", "smuves sync 1001", "smuves worker", "smuves serve", ".env"):
        assert expected in text


async def test_make_fake_serves_the_demo_portal_at_the_recorded_address(tmp_path: Path) -> None:
    demo = load_demo()
    env_path = tmp_path / ".env"
    port = free_port()
    env_path.write_text(
        f"SMUVES_HUBSPOT_BASE_URL=http://127.0.0.1:{port}\nSMUVES_DEMO_SCALE=0.01\n"
    )
    async with make_fake(env_path) as base_url, httpx.AsyncClient(timeout=10) as http:
        assert base_url == f"http://127.0.0.1:{port}"
        totals = []
        for archived in ("false", "true"):
            response = await http.get(
                f"{base_url}/cms/v3/pages/site-pages",
                params={"limit": 1, "archived": archived},
                headers={"Authorization": f"Bearer {demo.DEMO_TOKEN}"},
            )
            assert response.status_code == 200
            totals.append(response.json()["total"])
    # The recorded scale: live and archived together are the scaled portal's pages.
    assert sum(totals) == demo.demo_portal(0.01).site_pages


async def test_make_fake_again_says_the_fake_is_serving_already(tmp_path: Path) -> None:
    env_path = tmp_path / ".env"
    env_path.write_text(
        f"SMUVES_HUBSPOT_BASE_URL=http://127.0.0.1:{free_port()}\nSMUVES_DEMO_SCALE=0.01\n"
    )
    async with make_fake(env_path) as base_url:
        again = await run(
            sys.executable, str(DEMO), "--serve-fake", env={**_env(env_path), "COLUMNS": "300"}
        )
    assert again.code == ExitCode.USAGE
    assert again.stdout == f"make fake: the demo's fake portal is serving at {base_url} already\n"


async def test_make_fake_without_a_playground_says_run_the_demo(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(DEMO),
        "--serve-fake",
        env=_env(tmp_path / "missing.env"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == ExitCode.USAGE
    assert "make demo" in out.decode()


@pytest.mark.slow
async def test_smuves_sync_1001_works_right_after_the_demo(db_url: str, tmp_path: Path) -> None:
    demo = load_demo()
    env_path = tmp_path / ".env"
    settings = Settings(
        database_url=db_url,
        **runtime_urls(db_url),
        export_dir=tmp_path / "exports",
        secret_key=SecretStr(new_secret_key()),
        poll_interval_seconds=0.2,
    )
    used = demo.playground_settings(settings)
    result = await demo.run_demo(
        used, Console(file=io.StringIO()), scale=0.01, fake_port=free_port()
    )
    assert result.code is ExitCode.OK
    demo.write_playground(env_path, used, result.hubspot_base_url, 0.01)

    async with make_fake(env_path) as base_url:
        assert base_url == result.hubspot_base_url
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "smuves_sync.cli",
            "sync",
            "1001",
            env={**_env(env_path), "COLUMNS": "200"},
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, out.decode()
    assert "completed" in out.decode()


def _demo_env(env_path: Path, db_url: str) -> dict[str, str]:
    """`make demo`'s shell: the env file, this test's database and its runtime logins."""
    return {
        **_env(env_path),
        "SMUVES_DATABASE_URL": db_url,
        **runtime_env(db_url),
        "SMUVES_POLL_INTERVAL_SECONDS": "0.2",
        "COLUMNS": "300",
    }


@pytest.mark.slow
async def test_a_demo_run_again_uses_the_fake_make_fake_serves(db_url: str, tmp_path: Path) -> None:
    env_path = tmp_path / ".env"
    address = f"http://127.0.0.1:{free_port()}"
    env_path.write_text(f"SMUVES_HUBSPOT_BASE_URL={address}\n")
    env = _demo_env(env_path, db_url)
    first = await run(sys.executable, str(DEMO), "--scale", "0.01", env=env, cwd=tmp_path)
    assert first.code == 0, first.stdout + first.stderr
    assert dotenv_values(env_path)["SMUVES_HUBSPOT_BASE_URL"] == address

    async with make_fake(env_path) as base_url:
        assert base_url == address
        # At another size than the one serving: refused in one line, .env untouched.
        before = env_path.read_text()
        other = await run(sys.executable, str(DEMO), "--scale", "0.5", env=env, cwd=tmp_path)
        assert other.code == ExitCode.USAGE
        assert other.stdout.strip().count("\n") == 0 and "scale 0.01" in other.stdout
        assert env_path.read_text() == before

        again = await run(sys.executable, str(DEMO), env=env, cwd=tmp_path)
        assert again.code == 0, again.stdout + again.stderr
        assert f"already serving at {address}" in again.stdout
        assert dotenv_values(env_path)["SMUVES_HUBSPOT_BASE_URL"] == address
        assert dotenv_values(env_path)["SMUVES_DEMO_SCALE"] == "0.01"
        # `make fake` outlived the demo: the commands after it reach it.
        done = await smuves(env, "sync", "1001")
        assert done.code == 0, done.stdout + done.stderr


async def test_the_demo_refuses_an_address_where_something_else_listens(
    db_url: str, tmp_path: Path
) -> None:
    env_path = tmp_path / ".env"
    someone_else = FakeHubSpot([PortalSpec(portal_id=7, token="not-the-demo")], ServerConfig())
    with serve_in_thread(someone_else) as base_url:
        env_path.write_text(f"SMUVES_HUBSPOT_BASE_URL={base_url}\nMY_OWN=line\n")
        before = env_path.read_text()
        done = await run(
            sys.executable, str(DEMO), "--scale", "0.01", env=_demo_env(env_path, db_url)
        )
    assert done.code == ExitCode.USAGE, done.stdout
    assert done.stdout.strip().count("\n") == 0, done.stdout
    assert f"cannot serve the demo's fake HubSpot at {base_url}" in done.stdout
    assert env_path.read_text() == before
