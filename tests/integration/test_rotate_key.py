"""`smuves admin rotate-key`: every stored token under the newest key, in batches, resumably."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr

from smuves_sync.cli.secret_key import Rotation, rotate_tokens
from smuves_sync.db import Database, Pool
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from tests.support import eventually, invoke, query
from tests.support.factories import Factory

OLD, NEW, LOST = new_secret_key(), new_secret_key(), new_secret_key()
BOTH = SecretStr(f"{NEW},{OLD}")


def _cipher(*keys: str) -> TokenCipher:
    return TokenCipher(SecretStr(",".join(keys)))


async def _plant(factory: Factory) -> dict[int, str]:
    """Portals 101-105 under the old key, 106 under the new one, 107 with no token; the
    token each portal holds."""
    tokens = {}
    for portal_id in range(101, 108):
        token = f"pat-na1-portal-{portal_id}"
        key = NEW if portal_id == 106 else OLD
        encrypted = None if portal_id == 107 else _cipher(key).encrypt(SecretStr(token))
        await factory.portal(portal_id=portal_id, token_encrypted=encrypted)
        if encrypted is not None:
            tokens[portal_id] = token
    return tokens


async def _stored(db: Database) -> dict[int, bytes]:
    rows = await query(db, "rotate_stored_tokens")
    return {r["id"]: bytes(r["token_encrypted"]) for r in rows}


async def test_every_token_ends_under_the_newest_key_and_reads_the_same(
    db: Database, factory: Factory
) -> None:
    tokens = await _plant(factory)
    batches: list[int] = []
    done = await rotate_tokens(
        db, _cipher(NEW, OLD), batch_size=2, on_batch=lambda r: batches.append(r.last_id)
    )
    assert (done.rotated, done.current, done.unreadable) == (5, 1, [])
    assert batches == [102, 104, 106]  # batches by portal id; 107 has no token to look at
    newest = _cipher(NEW)  # the old key can go now
    stored = await _stored(db)
    assert {p: newest.decrypt(t).get_secret_value() for p, t in stored.items()} == tokens

    again = await rotate_tokens(db, _cipher(NEW, OLD), batch_size=2)
    assert (again.rotated, again.current) == (0, 6)
    assert await _stored(db) == stored  # nothing rewritten


async def test_a_rotation_that_stopped_is_finished_by_running_it_again(
    db: Database, factory: Factory
) -> None:
    tokens = await _plant(factory)

    def crash(done: Rotation) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the first batch committed

    with pytest.raises(KeyboardInterrupt):
        await rotate_tokens(db, _cipher(NEW, OLD), batch_size=3, on_batch=crash)
    newest = _cipher(NEW)
    halfway = await _stored(db)
    assert [p for p, t in sorted(halfway.items()) if newest.is_current(t)] == [101, 102, 103, 106]

    done = await rotate_tokens(db, _cipher(NEW, OLD), batch_size=3)
    assert (done.rotated, done.current) == (2, 4)
    stored = await _stored(db)
    assert all(newest.is_current(t) for t in stored.values())
    assert {p: newest.decrypt(t).get_secret_value() for p, t in stored.items()} == tokens


async def test_the_command_names_tokens_no_key_reads_and_exits_1(
    db: Database, factory: Factory, db_url: str
) -> None:
    await _plant(factory)
    await factory.portal(
        portal_id=108, token_encrypted=_cipher(LOST).encrypt(SecretStr("pat-lost"))
    )
    result = await invoke(
        db_url, "admin", "rotate-key", "--batch-size", "4",
        env={"SMUVES_SECRET_KEY": BOTH.get_secret_value(), "SMUVES_ENV_FILE": ""},
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "5 token(s) re-encrypted under the newest key, 1 already were" in result.stdout
    assert "(portals 108)" in result.stderr and "pat-" not in result.output
    stored = await _stored(db)
    assert _cipher(LOST).decrypt(stored[108]).get_secret_value() == "pat-lost"  # left as it was
    assert sum(_cipher(NEW).is_current(t) for t in stored.values()) == 6


async def test_a_portal_reconnected_under_the_old_key_during_a_rotation_fails_its_check(
    db: Database, factory: Factory, db_url: str, admin_pool: Pool
) -> None:
    tokens = await _plant(factory)
    env = {"SMUVES_SECRET_KEY": BOTH.get_secret_value(), "SMUVES_ENV_FILE": ""}
    # Portal 104's row is held, so the rotation stops at it (one portal per batch) after it
    # has re-encrypted 101-103.
    async with admin_pool.connection() as holder, holder.transaction():
        await query(holder, "token_lock_portal", portal_id=104)
        rotating = asyncio.create_task(
            invoke(db_url, "admin", "rotate-key", "--batch-size", "1", env=env)
        )
        await eventually(lambda: _rotation_waits(db), what="the rotation waits at portal 104")
        # An API still running with only the old key reconnects portal 102 meanwhile.
        old_only = _cipher(OLD).encrypt(SecretStr("pat-na1-reconnected-102"))
        await query(db, "rotate_store_token", portal_id=102, token_encrypted=old_only)
    result = await rotating

    assert result.exit_code == 1, result.output
    assert "1 portal(s) still under an older key (portals 102)" in result.stderr
    assert "SMUVES_SECRET_KEY=NEW,OLD" in result.stderr and "pat-" not in result.output
    assert result.stderr.strip().count("\n") == 0
    stored = await _stored(db)
    assert not _cipher(NEW).is_current(stored[102])  # the old key must not be dropped yet

    again = await invoke(db_url, "admin", "rotate-key", env=env)
    assert again.exit_code == 0, again.output
    assert "verified: all 6 stored token(s) are under the newest key" in again.stdout
    stored = await _stored(db)
    newest = _cipher(NEW)
    assert {p: newest.decrypt(t).get_secret_value() for p, t in stored.items()} == {
        **tokens,
        102: "pat-na1-reconnected-102",
    }


async def _rotation_waits(db: Database) -> bool:
    [row] = await query(db, "token_rotation_waits")
    return bool(row["waiting"])
