"""`smuves portal add`: register a HubSpot portal and store its token, encrypted.

The token is a HubSpot private app token, read from SMUVES_HUBSPOT_TOKEN or, with
--token-stdin, from standard input (so it stays out of shell history and `ps`). It is
encrypted with SMUVES_SECRET_KEY (`smuves secret-key` prints one) before it reaches the
database and is never printed.
"""

from __future__ import annotations

import re
import sys

import click
from pydantic import SecretStr

from smuves_sync.cli.common import ID, ExitCode, command_error, run_async
from smuves_sync.cli.session import load_settings, login_database, token_cipher
from smuves_sync.db import Database
from smuves_sync.db.portals import app_user_ensure, portal_get, portal_save
from smuves_sync.errors import InvalidInput
from smuves_sync.models import Portal
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher

DEFAULT_OWNER = "operator@localhost"
# The shape app_users accepts (one @, no spaces); anything finer is the mail server's business.
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


async def add_portal(
    db: Database,
    cipher: TokenCipher,
    portal_id: int,
    name: str,
    token: SecretStr,
    *,
    owner_email: str | None = None,
) -> Portal:
    """Add or update a portal; the owner (created if missing) becomes a member.

    Without `owner_email` an existing portal keeps its owner and a new one is owned by
    `DEFAULT_OWNER`.
    """
    if portal_id <= 0:
        raise InvalidInput(f"portal id must be a positive number, got {portal_id}")
    if not name.strip():
        raise InvalidInput("a portal needs a name (--name)")
    if not token.get_secret_value().strip():
        raise InvalidInput("the HubSpot token is empty")
    existing = await portal_get(db, portal_id)
    if owner_email is not None:
        email = owner_email.strip().lower()
        if not _EMAIL.match(email):
            raise InvalidInput(f"--owner {owner_email!r} is not an email address")
        owner_id = await app_user_ensure(db, email)
    elif existing is not None:
        owner_id = existing.owner_id
    else:
        owner_id = await app_user_ensure(db, DEFAULT_OWNER)
    encrypted = cipher.encrypt(SecretStr(token.get_secret_value().strip()))
    return await portal_save(db, portal_id, name.strip(), owner_id, encrypted)


def _token(settings: Settings, from_stdin: bool) -> SecretStr:
    if from_stdin:
        line = sys.stdin.buffer.readline()
        token = SecretStr(line.decode("utf-8", "surrogateescape").strip())
    elif settings.hubspot_token is None:
        raise command_error(
            "no HubSpot token: set SMUVES_HUBSPOT_TOKEN or pass the token on standard input "
            "with --token-stdin",
            ExitCode.USAGE,
        )
    else:
        token = settings.hubspot_token
    # HubSpot tokens are printable ASCII; anything else (undecodable bytes) is a wrong paste.
    value = token.get_secret_value()
    if not (value.isascii() and value.isprintable()):
        raise command_error(
            "the HubSpot token has characters no HubSpot token has (it is printable ASCII)",
            ExitCode.USAGE,
        )
    return token


@click.group()
def portal() -> None:
    """HubSpot portals this installation fetches."""


@portal.command("add")
@click.argument("portal_id", type=ID)
@click.option("--name", required=True, help="A name people recognise the portal by.")
@click.option(
    "--owner", "owner_email", default=None, help=f"Owner's email (default {DEFAULT_OWNER})."
)
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input.")
def add(portal_id: int, name: str, owner_email: str | None, token_stdin: bool) -> None:
    """Add PORTAL_ID (HubSpot's hub id), or update its name, owner and token."""
    settings = load_settings()
    cipher = token_cipher(settings)
    token = _token(settings, token_stdin)

    async def main() -> Portal:
        async with login_database(settings) as db:
            return await add_portal(db, cipher, portal_id, name, token, owner_email=owner_email)

    saved = run_async(main())
    click.echo(f"portal {saved.id} ({saved.name}) saved; its token is stored encrypted")
