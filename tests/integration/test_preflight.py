"""Commands that need SMUVES_SECRET_KEY (sync, worker, portal add, serve) refuse to start
without a valid one, in one line naming `smuves secret-key`, before they create anything; and
`smuves secret-key` prints a key they accept."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result
from pydantic import SecretStr

from smuves_sync.cli import cli
from smuves_sync.db import Database
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from tests.integration.api.conftest import AUDIENCE, JWT_SECRET, serve_refusal
from tests.support import invoke, query
from tests.support.factories import Factory

# What operators have set before: a passphrase (HKDF stretched it), a key cut short, and a
# list whose older key is a passphrase.
BAD_KEYS = {
    "missing": None,
    "passphrase": "change me to something long and random",
    "truncated": "a" * 43,
    "old-passphrase": f"{new_secret_key()},an old passphrase",
}
NEEDS_THE_KEY = [
    ("sync", "{portal}"),
    ("sync", "{portal}", "--no-wait"),
    ("portal", "add", "{portal}", "--name", "Renamed"),
    ("worker", "--burst"),
]


def _refused_for_the_key(result: Result) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.output.count("\n") == 1 and "Traceback" not in result.output, result.output
    assert "SMUVES_SECRET_KEY" in result.output and "`smuves secret-key`" in result.output


@pytest.mark.parametrize("case", list(BAD_KEYS))
@pytest.mark.parametrize("args", NEEDS_THE_KEY, ids=lambda a: " ".join(a[:2]).strip("{}"))
async def test_commands_that_need_the_key_refuse_before_creating_anything(
    db: Database, db_url: str, factory: Factory, args: tuple[str, ...], case: str
) -> None:
    portal = await factory.portal(portal_id=4711, name="Before")
    command = [a.format(portal=portal) for a in args]
    result = await invoke(
        db_url, *command, env={"SMUVES_SECRET_KEY": BAD_KEYS[case], "SMUVES_HUBSPOT_TOKEN": "pat"}
    )
    _refused_for_the_key(result)
    assert await query(db, "sync_runs_of_portal", portal_id=portal) == []
    [row] = await query(db, "sync_portal_row", portal_id=portal)
    assert row["name"] == "Before"


async def test_a_new_portal_is_not_added_without_a_valid_key(db: Database, db_url: str) -> None:
    result = await invoke(
        db_url,
        "portal",
        "add",
        "4712",
        "--name",
        "New",
        env={"SMUVES_SECRET_KEY": "not a key", "SMUVES_HUBSPOT_TOKEN": "pat"},
    )
    _refused_for_the_key(result)
    assert await query(db, "sync_portal_row", portal_id=4712) == []


@pytest.mark.parametrize("case", list(BAD_KEYS))
def test_serve_refuses_to_start_without_a_valid_key(case: str) -> None:
    result = serve_refusal(
        {
            "SMUVES_JWT_SECRET": JWT_SECRET,
            "SMUVES_JWT_AUDIENCE": AUDIENCE,
            "SMUVES_SECRET_KEY": BAD_KEYS[case],
        }
    )
    _refused_for_the_key(result)


def test_secret_key_prints_a_fresh_key_the_commands_accept() -> None:
    first = CliRunner().invoke(cli, ["secret-key"])
    second = CliRunner().invoke(cli, ["secret-key"])
    assert first.exit_code == 0 and second.exit_code == 0
    key = first.output.strip()
    assert first.output == key + "\n" and key != second.output.strip()
    cipher = TokenCipher(SecretStr(key))
    assert cipher.decrypt(cipher.encrypt(SecretStr("pat"))).get_secret_value() == "pat"
