"""`smuves portal add`: token stored encrypted, owner made a member, bad input refused."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from smuves_sync.cli.portal import add_portal
from smuves_sync.db import Database
from smuves_sync.errors import InvalidInput
from smuves_sync.token_crypto import TokenCipher
from tests.support import SECRET, query, smuves, smuves_env


async def add(env: dict[str, str], *args: str, token: str | None = None) -> tuple[int, str]:
    """Run `smuves portal add ARGS…`, the token on stdin when given; the code and all output."""
    done = await smuves(env, "portal", "add", *args, stdin=(token or "") + "\n", timeout=60)
    return done.code, done.stdout + done.stderr


async def test_a_portal_is_added_with_its_token_encrypted_and_its_owner_a_member(
    db: Database, db_url: str
) -> None:
    env = smuves_env(db_url)
    code, out = await add(
        env,
        "31337",
        "--name",
        "Acme",
        "--owner",
        "Ops@Acme.example",
        "--token-stdin",
        token="pat-na1-first",
    )
    assert code == 0, out
    assert "pat-na1" not in out

    [row] = await query(db, "sync_portal_row", portal_id=31337)
    cipher = TokenCipher(SecretStr(SECRET))
    assert cipher.decrypt(bytes(row["token_encrypted"])).get_secret_value() == "pat-na1-first"
    assert b"pat-na1" not in bytes(row["token_encrypted"])
    members = await query(db, "sync_members_of_portal", portal_id=31337)
    assert members == [{"email": "ops@acme.example", "role": "owner"}]

    # Again from the environment, no --owner: the name and token change, the owner stays.
    code, out = await add(
        {**env, "SMUVES_HUBSPOT_TOKEN": "pat-na1-second"}, "31337", "--name", "Acme Inc"
    )
    assert code == 0, out
    [row] = await query(db, "sync_portal_row", portal_id=31337)
    assert row["name"] == "Acme Inc"
    assert cipher.decrypt(bytes(row["token_encrypted"])).get_secret_value() == "pat-na1-second"
    assert await query(db, "sync_members_of_portal", portal_id=31337) == members


async def test_a_missing_key_or_token_is_refused_with_exit_code_2(
    db: Database, db_url: str
) -> None:
    env = smuves_env(db_url)
    no_key = {k: v for k, v in env.items() if k != "SMUVES_SECRET_KEY"}

    code, out = await add(no_key, "1", "--name", "A", "--token-stdin", token="t")
    assert (code, "SMUVES_SECRET_KEY is not set" in out) == (2, True), out
    code, out = await add(env, "1", "--name", "A")
    assert (code, "SMUVES_HUBSPOT_TOKEN" in out) == (2, True), out
    assert await query(db, "sync_portal_row", portal_id=1) == []


@pytest.mark.parametrize(
    ("portal_id", "name", "token", "owner", "message"),
    [
        (1, "A", " ", None, "token is empty"),
        (0, "A", "t", None, "positive"),
        (1, " ", "t", None, "needs a name"),
        (1, "A", "t", "nobody", "not an email address"),
    ],
)
async def test_bad_values_change_nothing(
    db: Database, portal_id: int, name: str, token: str, owner: str | None, message: str
) -> None:
    cipher = TokenCipher(SecretStr(SECRET))
    with pytest.raises(InvalidInput, match=message):
        await add_portal(db, cipher, portal_id, name, SecretStr(token), owner_email=owner)
    assert await query(db, "sync_portal_row", portal_id=portal_id) == []
