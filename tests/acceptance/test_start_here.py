"""The README's "Start here", run as it is written, in order, on an empty working directory.

The section's ```sh blocks are read from the README: the first (`make demo`, `make fake`,
`make dashboard`, `make install`, `make test`), the second (`make fake &`, then `smuves sync
1001` and every command after it) and the third (`smuves serve &`, and curl with the token
`smuves dev token` mints). They run as: the demo, the demo again, the second block, the
third, and `make dashboard`'s link, signed in with and showing the demo's portal.
`make install` and `make test` are not run: they are what runs this test.

Where they run: a temporary working directory with no .env, no data directory and no
exports, in which `.venv` and `scripts` are the checkout's, so
each line runs as written with the venv's binaries (`.venv` is this
interpreter's environment). A `make` target runs its recipe, read
from the Makefile (`$(BIN)` is .venv/bin), not make itself, which could reinstall the venv.

What differs from a person's shell, so that concurrent test runs do not collide and the test
stays short: the database is this test's, on the test server (SMUVES_DATABASE_URL and its
runtime logins, which the demo records in .env like any database of one's own); the fake
HubSpot listens on a free port (SMUVES_HUBSPOT_BASE_URL) and serves a small portal
(SMUVES_DEMO_SCALE); the API and the dashboard listen on free ports (`--port 0`, and curl is
pointed at the API's); `smuves worker` gets `--burst`, to exit once the queue is empty rather
than at Ctrl-C.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import shlex
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest

from tests.integration.dashboard.conftest import sign_in
from tests.integration.test_demo import DEMO, load_demo
from tests.support import free_port, run
from tests.support.logins import runtime_env

pytestmark = [pytest.mark.acceptance, pytest.mark.slow, pytest.mark.timeout(600)]

CHECKOUT = Path(__file__).resolve().parents[2]
README = CHECKOUT / "README.md"
MAKEFILE = CHECKOUT / "Makefile"
# The make targets of the README's first block that are not run: they are what runs this test.
NOT_RUN = ("install", "test")
SCALE = "0.01"


@dataclass(frozen=True)
class Line:
    """One command line of a ```sh block: its words, and whether it runs in the background."""

    text: str
    argv: tuple[str, ...]
    background: bool


def start_here_blocks() -> list[list[Line]]:
    """The command lines of the ```sh blocks of the README's "Start here"."""
    section = README.read_text(encoding="utf-8").split("\n## Start here\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```$", section, flags=re.M | re.S)
    parsed = []
    for block in blocks:
        lines = []
        for text in block.splitlines():
            words = shlex.split(text, comments=True)
            if words:
                background = words[-1] == "&"
                lines.append(Line(text, tuple(words[:-1] if background else words), background))
        parsed.append(lines)
    return parsed


def recipe(target: str) -> tuple[str, ...]:
    """The Makefile's one-line recipe of `target`, as words, `$(BIN)` being .venv/bin and
    `$(or $(VAR),default)` its default."""
    found = re.search(rf"^{re.escape(target)}:.*\n\t(.+)$", MAKEFILE.read_text(), flags=re.M)
    assert found, f"no recipe of make {target}"
    text = found.group(1).replace("$(BIN)", ".venv/bin")
    text = re.sub(r"\$\(or \$\(\w+\),([^)]*)\)", r"\1", text)
    assert "$(" not in text, text
    return tuple(shlex.split(text))


def as_run(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The words to run for a line's `argv`: a make target's recipe; a server on a free port;
    a worker that exits when the queue is empty."""
    if argv[0] == "make":
        (target,) = argv[1:]
        argv = recipe(target)
    if argv[:2] in ((".venv/bin/smuves", "serve"), (".venv/bin/smuves", "dashboard")):
        if "--port" in argv:
            at = argv.index("--port")
            argv = argv[:at] + argv[at + 2 :]
        argv = (*argv, "--port", "0")
    if argv[:2] == (".venv/bin/smuves", "worker"):
        argv = (*argv, "--burst")
    return argv


def workdir(tmp_path: Path) -> Path:
    """An empty working directory with the venv's binaries and the checkout's scripts."""
    here = tmp_path / "checkout"
    here.mkdir()
    # The whole environment, not its bin/ alone: Python finds its venv by pyvenv.cfg beside it.
    (here / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    (here / "scripts").symlink_to(DEMO.parent, target_is_directory=True)
    return here


def csv_rows(path: Path) -> list[dict[str, str]]:
    """The rows of an exported CSV file."""
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def shell_env(db_url: str) -> dict[str, str]:
    """A shell with no SMUVES_ variable (so `.env`, in the working directory, is read) but this
    test's database, the fake's free port and the small portal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMUVES_")}
    return {
        **env,
        "SMUVES_DATABASE_URL": db_url,
        **runtime_env(db_url),
        "SMUVES_HUBSPOT_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "SMUVES_DEMO_SCALE": SCALE,
        "COLUMNS": "200",
    }


@asynccontextmanager
async def background(
    argv: tuple[str, ...], env: dict[str, str], cwd: Path, ready: str
) -> AsyncIterator[re.Match[str]]:
    """`argv` running until the block ends (SIGTERM), once a line of its output matches
    `ready`: that match."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = process.stdout
    assert output is not None
    said = ""
    drain = None
    try:
        async with asyncio.timeout(120):
            while not (found := re.search(ready, said)):
                line = (await output.readline()).decode()
                assert line, f"{shlex.join(argv)} exited: {said}"
                said += line
        # Read on, so that a full pipe never stops the server (its access log, say).
        drain = asyncio.create_task(output.read())
        yield found
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            await process.wait()
            if drain is not None:
                await drain


async def foreground(line: Line, env: dict[str, str], cwd: Path) -> str:
    """Run `line` to its end (a line with `$(…)` through bash, as a person's shell would);
    what it printed, after checking it succeeded."""
    argv = ("bash", "-c", line.text) if "$(" in line.text else as_run(line.argv)
    done = await run(*argv, env=env, cwd=cwd, timeout=300)
    assert done.code == 0, (line.text, done.stdout, done.stderr)
    return done.stdout


def words(text: str) -> str:
    """`text` with its runs of white space as single spaces, however a console wrapped it."""
    return " ".join(text.split())


async def test_start_here_runs_as_written_on_an_empty_directory(
    db_url: str, tmp_path: Path
) -> None:
    first, second, third = start_here_blocks()
    # The commands this test knows how to run, in the blocks it expects them in.
    assert [line.argv for line in first] == [
        ("make", target) for target in ("demo", "fake", "dashboard", *NOT_RUN)
    ]
    demo, _, dashboard = first[:3]
    fake, *commands = second
    assert fake.argv == ("make", "fake") and fake.background
    assert all(line.argv[0] == ".venv/bin/smuves" for line in commands)
    serve, curl = third
    assert serve.argv == (".venv/bin/smuves", "serve") and serve.background
    assert "$(.venv/bin/smuves dev token)" in curl.text and "localhost:8000" in curl.text
    here, env = workdir(tmp_path), shell_env(db_url)

    for _ in range(2):  # the demo, then the demo again
        said = words(await foreground(demo, env, here))
        assert "The CSV is at" in said
    assert (here / ".env").is_file()
    # Each demo exported the small portal's site pages, where the README says.
    site_pages = load_demo().demo_portal(float(SCALE)).site_pages
    exported = sorted((here / "exports" / "portal-1001").glob("site_page-run*.csv"))
    assert [len(csv_rows(path)) for path in exported] == [site_pages] * 2

    async with AsyncExitStack() as serving:
        await serving.enter_async_context(
            background(as_run(fake.argv), env, here, r"serving at http://")
        )
        for line in commands:  # `smuves sync 1001` first
            said = words(await foreground(line, env, here))
            if line.argv[1:] == ("sync", "1001"):
                assert "completed" in said
            if line.argv[1:3] == ("portal", "list"):
                assert "1001" in said

        api = await serving.enter_async_context(
            background(as_run(serve.argv), env, here, r"Uvicorn running on http://\S+:(\d+)")
        )
        on_its_port = replace(curl, text=curl.text.replace("localhost:8000", f"localhost:{api[1]}"))
        listed = json.loads(await foreground(on_its_port, env, here))
        assert 1001 in [portal["id"] for portal in listed["items"]]

        link = await serving.enter_async_context(
            background(
                as_run(dashboard.argv), env, here, r"sign in .*: (http://\S+)/login\?token=(\S+)"
            )
        )
        async with httpx.AsyncClient(base_url=link[1], timeout=30) as browser:
            assert (await browser.get(f"/login?token={link[2]}")).status_code == 200
            await sign_in(browser, token=link[2])
            portals = await browser.get("/portals")
        assert portals.status_code == 200 and "1001" in portals.text
