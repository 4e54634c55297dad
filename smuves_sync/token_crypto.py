"""Encrypts portal tokens at rest with the keys in ``SMUVES_SECRET_KEY`` (Fernet).

    cipher = TokenCipher(settings.secret_key)     # ConfigurationError unless every key is valid
    blob = cipher.encrypt(SecretStr(token))       # under the newest key
    cipher.decrypt(blob)                          # with whichever key it was stored under
    cipher.is_current(blob) or cipher.rotate(blob)   # re-encrypt under the newest key

A key is Fernet's own format: 32 random bytes in urlsafe base64 (44 characters), as
`smuves secret-key` (`new_secret_key()`) prints. Nothing else is accepted: a passphrase
stretched into a key could be guessed offline from a database dump.

``SMUVES_SECRET_KEY`` holds one key or several, comma-separated, newest first. Tokens are
encrypted under the first; any of them decrypts. To rotate, run every process with a new key
in front (``SMUVES_SECRET_KEY=<new>,<old>``), re-encrypt the stored tokens (`rotate`), check
that every one is current (`is_current`: Fernet's tokens do not name their key, so "the
newest key alone decrypts it"), and only then drop the old key. A token no key decrypts is
`TokenKeyMissing`.
"""

from __future__ import annotations

import base64
import binascii
import re

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError, TokenKeyMissing

NEW_KEY_HINT = "`smuves secret-key` prints a new one"
# 32 bytes in base64 are 43 significant characters and one '=' of padding.
_KEY_SHAPE = re.compile(r"^[A-Za-z0-9_-]{43}=$")
_KEY_BYTES = 32


def new_secret_key() -> str:
    """A fresh random key in the format ``SMUVES_SECRET_KEY`` accepts."""
    return Fernet.generate_key().decode("ascii")


def _is_key(text: str) -> bool:
    if not _KEY_SHAPE.match(text):
        return False
    try:
        return len(base64.urlsafe_b64decode(text)) == _KEY_BYTES
    except (binascii.Error, ValueError):
        return False


def parse_secret_keys(secret_key: SecretStr | None) -> list[bytes]:
    """The keys of ``SMUVES_SECRET_KEY``, newest first; `ConfigurationError` unless all valid.

    The message is one line and never contains a key, nor any part of one.
    """
    text = secret_key.get_secret_value().strip() if secret_key is not None else ""
    if not text:
        raise ConfigurationError(
            "SMUVES_SECRET_KEY is not set; it is needed to store and read portal tokens "
            f"({NEW_KEY_HINT})"
        )
    keys = [part.strip() for part in text.split(",")]
    for position, key in enumerate(keys, start=1):
        if not _is_key(key):
            which = "" if len(keys) == 1 else f" (key {position} of {len(keys)})"
            raise ConfigurationError(
                f"SMUVES_SECRET_KEY is not a valid key{which}: expected 32 random bytes in "
                f"urlsafe base64, 44 characters, comma-separated when several ({NEW_KEY_HINT})"
            )
    return [key.encode("ascii") for key in keys]


class TokenCipher:
    """Encrypts and decrypts HubSpot tokens; the keys themselves never leave this object."""

    def __init__(self, secret_key: SecretStr | None) -> None:
        keys = parse_secret_keys(secret_key)
        self._newest = Fernet(keys[0])
        self._keys = MultiFernet([Fernet(key) for key in keys])
        self._key_count = len(keys)

    def __repr__(self) -> str:
        return f"TokenCipher(<{self._key_count} key(s) hidden>)"

    @property
    def key_count(self) -> int:
        """How many keys decrypt (the newest also encrypts)."""
        return self._key_count

    def encrypt(self, token: SecretStr) -> bytes:
        """Return the encrypted form of `token` under the newest key, safe to store."""
        return self._newest.encrypt(token.get_secret_value().encode())

    def decrypt(self, encrypted: bytes) -> SecretStr:
        """Return the token; no key that decrypts it is a configuration error, not a crash."""
        try:
            return SecretStr(self._keys.decrypt(encrypted).decode())
        except InvalidToken:
            raise self._unreadable() from None

    def is_current(self, encrypted: bytes) -> bool:
        """True when `encrypted` is under the newest key (rotating it would change nothing)."""
        try:
            self._newest.decrypt(encrypted)
        except InvalidToken:
            return False
        return True

    def rotate(self, encrypted: bytes) -> bytes:
        """`encrypted` re-encrypted under the newest key, from whichever key it is under."""
        try:
            return self._keys.rotate(encrypted)
        except InvalidToken:
            raise self._unreadable() from None

    def _unreadable(self) -> TokenKeyMissing:
        return TokenKeyMissing(
            "a stored portal token cannot be decrypted: SMUVES_SECRET_KEY differs from the key "
            "it was stored with; add that key after the newest one (comma-separated) or "
            "reconnect the portal"
        )
