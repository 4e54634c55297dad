"""Encrypts portal tokens at rest with a key derived from ``SMUVES_SECRET_KEY`` (Fernet)."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError

# A fixed context string: changing it would make every stored token unreadable.
_HKDF_INFO = b"smuves-sync portal token v1"


class TokenCipher:
    """Encrypts and decrypts HubSpot tokens; the secret key itself never leaves this object."""

    def __init__(self, secret_key: SecretStr | None) -> None:
        if secret_key is None or not secret_key.get_secret_value():
            raise ConfigurationError(
                "SMUVES_SECRET_KEY is not set; it is needed to store and read portal tokens"
            )
        # Operators set a passphrase of any length; HKDF stretches it to Fernet's 32-byte key.
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
            secret_key.get_secret_value().encode()
        )
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def __repr__(self) -> str:
        return "TokenCipher(<hidden>)"

    def encrypt(self, token: SecretStr) -> bytes:
        """Return the encrypted form of `token`, safe to store."""
        return self._fernet.encrypt(token.get_secret_value().encode())

    def decrypt(self, encrypted: bytes) -> SecretStr:
        """Return the token; a wrong key is a configuration error, not a crash."""
        try:
            return SecretStr(self._fernet.decrypt(encrypted).decode())
        except InvalidToken:
            raise ConfigurationError(
                "a stored portal token cannot be decrypted: SMUVES_SECRET_KEY differs from the key "
                "it was stored with; set the original key or reconnect the portal"
            ) from None
