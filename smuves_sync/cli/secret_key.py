"""`smuves secret-key`: print a new random key for ``SMUVES_SECRET_KEY``; and what `smuves admin
rotate-key` does with a new one: re-encrypt every stored token under it, then check that
every stored token is under it.

    export SMUVES_SECRET_KEY="$(smuves secret-key)"
    export SMUVES_SECRET_KEY="$(smuves secret-key),$SMUVES_SECRET_KEY"   # rotate: newest first
    smuves admin rotate-key                      # every stored token under the newest key

The key is 32 random bytes in urlsafe base64 (Fernet's format), the only kind of key
SMUVES_SECRET_KEY accepts. Only the key is printed, so the output can be captured as is.

A rotation walks the portals by id in batches, each batch one transaction (its rows locked
while it is re-encrypted, so a reconnect waits for it); a token already under the newest key
is left alone. Stopped halfway (a crash, Ctrl-C), it is simply run again: the batches done are
done, and the rest follow. A token no key of SMUVES_SECRET_KEY decrypts is named and left as it
is; until there is none, the older keys must stay in the list.

The verification pass (`verify_tokens`) reads every stored token again, after the rotation,
and tells which are not under the newest key. A process that still runs with only the old key
(an API that has not been restarted with ``NEW,OLD``) stores a reconnected portal's token
under the old key, during the rotation or after it; such a token is found here, and the old
key may leave the list only once a pass finds none. Fernet's tokens do not name their key: a
token is under the newest key when the newest key alone decrypts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import click

from smuves_sync.db import Database
from smuves_sync.db.portals import portal_tokens_batch, portal_tokens_page, portal_tokens_replace
from smuves_sync.errors import ConfigurationError
from smuves_sync.token_crypto import TokenCipher, new_secret_key


@dataclass
class Rotation:
    """How far a rotation got."""

    rotated: int = 0  # re-encrypted under the newest key
    current: int = 0  # already were
    unreadable: list[int] = field(default_factory=list)  # portals no key decrypts
    last_id: int = 0  # the last portal looked at: batches after it are still to come


async def rotate_tokens(
    db: Database,
    cipher: TokenCipher,
    *,
    batch_size: int = 500,
    after: int = 0,
    on_batch: Callable[[Rotation], None] | None = None,
) -> Rotation:
    """Re-encrypt every stored portal token after portal `after` under the newest key of
    `cipher`, `batch_size` portals per transaction; `on_batch` hears of each batch done."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    done = Rotation(last_id=after)
    while True:
        async with db.transaction() as tx:
            batch = await portal_tokens_batch(tx, after=done.last_id, limit=batch_size)
            if not batch:
                return done
            new: list[tuple[int, bytes]] = []
            for stored in batch:
                if cipher.is_current(stored.token_encrypted):
                    done.current += 1
                    continue
                try:
                    new.append((stored.id, cipher.rotate(stored.token_encrypted)))
                except ConfigurationError:
                    done.unreadable.append(stored.id)
            done.rotated += await portal_tokens_replace(tx, new)
            done.last_id = batch[-1].id
        if on_batch is not None:
            on_batch(done)


@dataclass
class Verification:
    """What a pass over every stored token found."""

    current: int = 0  # under the newest key
    older: list[int] = field(default_factory=list)  # portals under an older key of the list
    unreadable: list[int] = field(default_factory=list)  # portals no key decrypts

    @property
    def done(self) -> bool:
        """True when every stored token is under the newest key: the older keys may go."""
        return not self.older and not self.unreadable


async def verify_tokens(
    db: Database, cipher: TokenCipher, *, batch_size: int = 500
) -> Verification:
    """Read every stored portal token, by portal id, `batch_size` at a time, and tell which are
    not under the newest key of `cipher` (nothing is locked or written)."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    found = Verification()
    after = 0
    while batch := await portal_tokens_page(db, after=after, limit=batch_size):
        for stored in batch:
            if cipher.is_current(stored.token_encrypted):
                found.current += 1
                continue
            try:
                cipher.decrypt(stored.token_encrypted)
            except ConfigurationError:
                found.unreadable.append(stored.id)
            else:
                found.older.append(stored.id)
        after = batch[-1].id
    return found


@click.command("secret-key")
def secret_key() -> None:
    """Print a new random key for SMUVES_SECRET_KEY (32 bytes, urlsafe base64)."""
    click.echo(new_secret_key())
