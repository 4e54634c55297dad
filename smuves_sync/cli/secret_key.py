"""`smuves secret-key`: print a new random key for ``SMUVES_SECRET_KEY``.

    export SMUVES_SECRET_KEY="$(smuves secret-key)"
    export SMUVES_SECRET_KEY="$(smuves secret-key),$SMUVES_SECRET_KEY"   # rotate: newest first

The key is 32 random bytes in urlsafe base64 (Fernet's format), the only kind of key
SMUVES_SECRET_KEY accepts. Only the key is printed, so the output can be captured as is.
"""

from __future__ import annotations

import click

from smuves_sync.token_crypto import new_secret_key


@click.command("secret-key")
def secret_key() -> None:
    """Print a new random key for SMUVES_SECRET_KEY (32 bytes, urlsafe base64)."""
    click.echo(new_secret_key())
