"""Clean refusals on the command line: an id that does not fit a bigint, an argument or a token
that is not valid UTF-8. Each is one line on the terminal and exit code 2, no traceback, and
nothing is written."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from smuves_sync.cli import cli
from smuves_sync.cli.common import BIGINT_MAX
from smuves_sync.db import Database
from tests.support import SECRET, invoke, query, smuves, smuves_env

BIG = "99999999999999999999"
ENV = {"SMUVES_SECRET_KEY": SECRET, "SMUVES_HUBSPOT_TOKEN": "pat-na1-refusals"}

# Every command that takes an id, with BIG in the id's place.
ID_COMMANDS = [
    ("portal", "add", BIG, "--name", "Acme"),
    ("sync", BIG),
    ("sync", BIG, "--no-wait"),
    ("export", BIG, "--type", "site_page"),
    ("run", BIG),
    ("runs", "--portal", BIG),
    ("jobs", "--portal", BIG),
    ("jobs", "--run", BIG),
    ("schedule", "add", BIG, "--cron", "0 3 * * *"),
    ("schedule", "list", "--portal", BIG),
    ("schedule", "remove", BIG),
    ("admin", "requeue", BIG),
    ("admin", "retry-failed", "--portal", BIG),
    ("admin", "retry-failed", "--run", BIG),
    ("changeset", "import", BIG, "edits.csv"),
    ("changeset", "show", BIG),
    ("changeset", "rollback", BIG),
]


def _refused(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit), result.exception
    for fragment in fragments:
        assert fragment in result.output, result.output


@pytest.mark.parametrize("args", ID_COMMANDS, ids=lambda args: " ".join(args[:2]))
async def test_an_id_beyond_bigint_is_refused_in_one_line(
    db: Database, db_url: str, args: tuple[str, ...]
) -> None:
    result = await invoke(db_url, *args, env=ENV)
    _refused(result, BIG, f"from 1 to {BIGINT_MAX}")
    assert await query(db, "sync_portal_row", portal_id=BIGINT_MAX) == []


@pytest.mark.parametrize("value", ["0", "12abc", "1.5", str(BIGINT_MAX + 1)])
async def test_other_ids_that_are_not_ids_are_refused_alike(db_url: str, value: str) -> None:
    _refused(await invoke(db_url, "export", value, "--type", "site_page", env=ENV), value)


async def test_the_largest_bigint_is_an_id(db_url: str) -> None:
    # Accepted as an id; then simply not found.
    result = await invoke(db_url, "run", str(BIGINT_MAX), env=ENV)
    assert result.exit_code == 2 and f"run {BIGINT_MAX} not found" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ("portal", "add", "5", "--name", "\udcff\udcfe"),
        ("portal", "add", "5", "--name", "Acme", "--owner", "ops\udce9@acme.example"),
        ("schedule", "add", "5", "--cron", "0 3 * * *", "--types", "site_page\udcff"),
        ("export", "5", "--type", "site_page", "--out", "caf\udce9.csv"),
    ],
    ids=["name", "owner", "types", "out"],
)
async def test_an_argument_that_is_not_utf8_is_refused_in_one_line(
    db: Database, db_url: str, args: tuple[str, ...]
) -> None:
    result = await invoke(db_url, *args, env=ENV)
    _refused(result, "not valid UTF-8")
    assert await query(db, "sync_portal_row", portal_id=5) == []


def test_a_bad_setting_is_one_line_without_its_value() -> None:
    result = CliRunner().invoke(cli, ["runs"], env={"SMUVES_POOL_MAX_SIZE": "many-secret-things"})
    _refused(result, "SMUVES_POOL_MAX_SIZE")
    assert "many-secret-things" not in result.output


async def _run(env: dict[str, str], *args: bytes, stdin: bytes = b"") -> tuple[int, str]:
    done = await smuves(env, *args, stdin=stdin, timeout=60)
    return done.code, done.stdout + done.stderr


async def test_real_undecodable_bytes_from_argv_and_stdin(db: Database, db_url: str) -> None:
    env = smuves_env(db_url)
    code, out = await _run(env, b"portal", b"add", b"7", b"--name", b"Caf\xe9", b"--token-stdin")
    assert (code, out.count("\n")) == (2, 1), out
    assert "Caf\\xe9" in out and "not valid UTF-8" in out

    code, out = await _run(
        env, b"portal", b"add", b"7", b"--name", b"Cafe", b"--token-stdin", stdin=b"pat-\xff\xfe\n"
    )
    assert (code, out.count("\n")) == (2, 1), out
    assert "HubSpot token" in out and "Traceback" not in out
    assert await query(db, "sync_portal_row", portal_id=7) == []

    code, out = await _run(env, b"portal", b"add", BIG.encode(), b"--name", b"Big")
    assert (code, out.count("\n")) == (2, 1), out


async def test_an_export_copied_to_out_must_be_waited_for(db: Database, db_url: str) -> None:
    # Workers elsewhere write only the export's own place; only this process could copy it.
    args = ("export", "5", "--type", "site_page", "--out", "pages.csv", "--no-wait")
    _refused(await invoke(db_url, *args, env=ENV), "--out needs the export to be waited for")
    assert await query(db, "sync_portal_row", portal_id=5) == []
