"""`smuves portal add`: token stored encrypted, owner made a member, bad input refused; only a
token HubSpot says is the portal's is accepted, and who has a portal never changes quietly."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from smuves_sync.cli.portal import add_portal
from smuves_sync.db import Database
from smuves_sync.errors import InvalidInput
from smuves_sync.testing.fake_hubspot import FakeHubSpot, PortalSpec
from smuves_sync.token_crypto import TokenCipher
from tests.support import SECRET, Served, query, smuves, smuves_env
from tests.support.factories import Factory

# The portals HubSpot (the fake) knows, and which token is whose.
ACME = PortalSpec(31337, "pat-na1-first", time_zone="America/Chicago")
OTHER = PortalSpec(31338, "pat-na1-other-portal")
pytestmark = pytest.mark.hubspot(ACME, OTHER, ten_second_limit=None)


async def add(env: dict[str, str], *args: str, token: str | None = None) -> tuple[int, str]:
    """Run `smuves portal add ARGS…`, the token on stdin when given; the code and all output."""
    done = await smuves(env, "portal", "add", *args, stdin=(token or "") + "\n", timeout=60)
    return done.code, done.stdout + done.stderr


async def test_a_portal_is_added_with_its_token_encrypted_and_its_owner_a_member(
    db: Database, db_url: str, hubspot: Served[FakeHubSpot]
) -> None:
    hubspot.fake.add_token(ACME.portal_id, "pat-na1-second")
    env = smuves_env(db_url, hubspot.base_url)
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


async def test_a_token_of_another_portal_is_refused_with_exit_code_2(
    db: Database, db_url: str, hubspot: Served[FakeHubSpot]
) -> None:
    env = smuves_env(db_url, hubspot.base_url)
    code, out = await add(
        env, "31337", "--name", "Acme", "--token-stdin", token="pat-na1-other-portal"
    )
    assert code == 2, out
    assert "TOKEN_PORTAL_MISMATCH" in out and "portal 31338, not 31337" in out
    assert "Traceback" not in out and "pat-na1" not in out
    assert await query(db, "sync_portal_row", portal_id=31337) == []
    code, out = await add(env, "31337", "--name", "Acme", "--token-stdin", token="pat-na1-revoked")
    assert code == 2 and "HUBSPOT_TOKEN_REJECTED" in out, out
    assert await query(db, "sync_portal_row", portal_id=31337) == []


async def test_someone_elses_portal_changes_hands_only_with_transfer_to(
    db: Database, db_url: str, hubspot: Served[FakeHubSpot], factory: Factory
) -> None:
    squatter = await factory.user("squatter@evil.example")
    friend = await factory.user("friend@evil.example")
    await factory.portal(squatter, portal_id=31337, name="Squatted", members=[friend])
    env = smuves_env(db_url, hubspot.base_url)
    before = await query(db, "sync_members_of_portal", portal_id=31337)

    code, out = await add(
        env, "31337", "--name", "Acme", "--owner", "ops@acme.example", "--token-stdin",
        token="pat-na1-first",
    )  # fmt: skip
    assert code == 2, out
    assert "owned by squatter@evil.example" in out and "--transfer-to ops@acme.example" in out
    [row] = await query(db, "sync_portal_row", portal_id=31337)
    assert (row["name"], row["token_encrypted"]) == ("Squatted", None)
    assert await query(db, "sync_members_of_portal", portal_id=31337) == before

    code, out = await add(
        env, "31337", "--name", "Acme", "--transfer-to", "Ops@Acme.example", "--token-stdin",
        token="pat-na1-first",
    )  # fmt: skip
    assert code == 0, out
    assert "transferred to Ops@Acme.example" in out
    assert "removed: friend@evil.example, squatter@evil.example" in out
    assert await query(db, "sync_members_of_portal", portal_id=31337) == [
        {"email": "ops@acme.example", "role": "owner"}
    ]
    [row] = await query(db, "sync_portal_row", portal_id=31337)
    assert row["name"] == "Acme" and row["token_encrypted"] is not None


async def test_reconnecting_says_who_keeps_the_portal_and_stores_its_time_zone(
    db: Database, db_url: str, hubspot: Served[FakeHubSpot], factory: Factory
) -> None:
    owner = await factory.user("owner@acme.example")
    viewer = await factory.user("viewer@acme.example")
    await factory.portal(owner, portal_id=31337, members=[viewer])
    env = smuves_env(db_url, hubspot.base_url)
    code, out = await add(env, "31337", "--name", "Acme", "--token-stdin", token="pat-na1-first")
    assert code == 0, out
    assert "owner owner@acme.example and members (viewer@acme.example) unchanged" in out
    assert "time zone America/Chicago" in out
    [zone] = await query(db, "cli_portal_time_zone", portal_id=31337)
    assert zone == {"time_zone": "America/Chicago"}
