"""`smuves portal add`: register a HubSpot portal and store its token, encrypted;
`smuves portal list`: every portal, its owner, how many members it has and its last sync.

The token is a HubSpot private app token, read from SMUVES_HUBSPOT_TOKEN or, with
--token-stdin, from standard input (so it stays out of shell history and `ps`). It is
encrypted with SMUVES_SECRET_KEY (`smuves secret-key` prints one) before it reaches the
database and is never printed.

A hub id is public, so a portal is added only with a token HubSpot says belongs to it: its
account details (`GET /account-info/v3/details`) name the token's portal, and any other is
refused (exit code 2) before anything is stored. They also give the portal's time zone, where
its daily API limit resets.

Adding a portal that exists reconnects it (a new token) and never changes who has it quietly:
without --owner the owner and members stay and are named in the output; --owner naming
somebody else than its owner is refused (exit code 2); --transfer-to EMAIL gives the portal to
EMAIL as its owner and only member, and names everyone who lost it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from uuid import UUID

import click
from pydantic import SecretStr

from smuves_sync.cli import ops_output as out
from smuves_sync.cli.common import ID, ExitCode, command_error, run_async
from smuves_sync.cli.ops import with_database
from smuves_sync.cli.session import load_settings, login_database, token_cipher
from smuves_sync.db import Database
from smuves_sync.db.portals import (
    PortalOwnership,
    app_user_ensure,
    portal_fetch_state,
    portal_ownership,
    portal_page,
    portal_store,
    portal_transfer,
)
from smuves_sync.errors import InvalidInput
from smuves_sync.hubspot.client import verify_portal_token
from smuves_sync.models import ContentType, Portal
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher

DEFAULT_OWNER = "operator@localhost"
# The shape app_users accepts (one @, no spaces); anything finer is the mail server's business.
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


@dataclass(frozen=True, slots=True)
class PortalAdded:
    """What `add_portal` did."""

    portal: Portal
    created: bool
    time_zone: str
    owner_email: str
    # Reconnected as it was: the members besides the owner who still have it.
    kept_members: tuple[str, ...] = ()
    # With --transfer-to: everyone who lost the portal (the previous owner included).
    removed_members: tuple[str, ...] | None = None

    def describe(self) -> str:
        """One or two lines for the operator."""
        portal = f"portal {self.portal.id} ({self.portal.name})"
        zone = f"time zone {self.time_zone}"
        if self.created:
            return (
                f"{portal} added, owned by {self.owner_email}, {zone}; its token is stored "
                "encrypted"
            )
        if self.removed_members is not None:
            removed = ", ".join(self.removed_members) or "nobody"
            return (
                f"{portal} reconnected and transferred to {self.owner_email}, now its only "
                f"member; removed: {removed}. {zone}; its token is stored encrypted"
            )
        others = ", ".join(self.kept_members) or "none"
        return (
            f"{portal} reconnected with a new token (stored encrypted), {zone}; owner "
            f"{self.owner_email} and members ({others}) unchanged"
        )


def valid_email(value: str | None, option: str) -> str | None:
    """`value` stripped, or None; `InvalidInput` naming `option` when it is no email address."""
    if value is None:
        return None
    # Lower-cased by the database, the one place emails are normalised.
    email = value.strip()
    if not _EMAIL.match(email):
        raise InvalidInput(f"{option} {value!r} is not an email address")
    return email


async def add_portal(
    db: Database,
    cipher: TokenCipher,
    portal_id: int,
    name: str,
    token: SecretStr,
    *,
    owner_email: str | None = None,
    transfer_to: str | None = None,
    settings: Settings | None = None,
) -> PortalAdded:
    """Add a portal, or reconnect one, once HubSpot has said the token is that portal's.

    A new portal is owned by `transfer_to` or `owner_email` (created, invited, if missing),
    else by `DEFAULT_OWNER`. An existing one keeps its owner and members unless `transfer_to`
    names a new owner (then its only member); `owner_email` naming another owner is refused.
    `settings` say where HubSpot is (default: the environment's). Raises `InvalidInput` (a
    bad value, `TokenPortalMismatch`, `TokenRejected`, a refused owner) before anything is
    written.
    """
    secret, owner, new_owner = _checked(portal_id, name, token, owner_email, transfer_to)
    account = await verify_portal_token(portal_id, secret, settings or Settings())
    record = _PortalRecord(portal_id, name.strip(), account.time_zone, cipher.encrypt(secret))
    async with db.transaction() as tx:
        held = await portal_ownership(tx, portal_id)
        if held is None:
            return await _add_new(tx, record, new_owner or owner)
        if new_owner is not None:
            return await _transfer(tx, record, new_owner)
        return await _reconnect(tx, record, held, owner)


def _checked(
    portal_id: int,
    name: str,
    token: SecretStr,
    owner_email: str | None,
    transfer_to: str | None,
) -> tuple[SecretStr, str | None, str | None]:
    """The token (stripped), owner and new owner, once every value is valid."""
    if portal_id <= 0:
        raise InvalidInput(f"portal id must be a positive number, got {portal_id}")
    if not name.strip():
        raise InvalidInput("a portal needs a name (--name)")
    secret = token.get_secret_value().strip()
    if not secret:
        raise InvalidInput("the HubSpot token is empty")
    owner = valid_email(owner_email, "--owner")
    new_owner = valid_email(transfer_to, "--transfer-to")
    if owner is not None and new_owner is not None and owner.lower() != new_owner.lower():
        raise InvalidInput("--owner and --transfer-to name different people; give one")
    return SecretStr(secret), owner, new_owner


@dataclass(frozen=True, slots=True)
class _PortalRecord:
    """The portal row to store, whoever owns it."""

    portal_id: int
    name: str
    time_zone: str
    encrypted_token: bytes = field(repr=False)

    async def store(self, tx: Database, owner_id: UUID) -> Portal:
        return await portal_store(
            tx, self.portal_id, self.name, owner_id, self.encrypted_token, self.time_zone
        )


async def _add_new(tx: Database, record: _PortalRecord, owner: str | None) -> PortalAdded:
    owner_id = (
        await app_user_ensure(tx, owner)
        if owner is not None
        # Nobody signs in as the placeholder owner: it is never taken over.
        else await app_user_ensure(tx, DEFAULT_OWNER, invited=False)
    )
    portal = await record.store(tx, owner_id)
    return PortalAdded(portal, True, record.time_zone, owner or DEFAULT_OWNER)


async def _transfer(tx: Database, record: _PortalRecord, new_owner: str) -> PortalAdded:
    owner_id = await app_user_ensure(tx, new_owner)
    portal = await record.store(tx, owner_id)
    removed = await portal_transfer(tx, record.portal_id, owner_id)
    return PortalAdded(portal, False, record.time_zone, new_owner, removed_members=tuple(removed))


async def _reconnect(
    tx: Database, record: _PortalRecord, held: PortalOwnership, owner: str | None
) -> PortalAdded:
    if owner is not None and await app_user_ensure(tx, owner) != held.owner_id:
        others = len(held.other_members)
        raise InvalidInput(
            f"portal {record.portal_id} is owned by {held.owner_email} (and {others} other "
            f"member(s)), not {owner}; nothing was changed. To make {owner} its owner and "
            f"only member, run again with --transfer-to {owner}"
        )
    portal = await record.store(tx, held.owner_id)
    return PortalAdded(
        portal,
        False,
        record.time_zone,
        held.owner_email,
        kept_members=tuple(held.other_members),
    )


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
    "--owner",
    "owner_email",
    default=None,
    help=f"Owner's email, for a new portal (default {DEFAULT_OWNER}); an existing portal "
    "must already be theirs.",
)
@click.option(
    "--transfer-to",
    "transfer_to",
    default=None,
    metavar="EMAIL",
    help="Make EMAIL the owner and only member, removing everyone else who has the portal.",
)
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input.")
def add(
    portal_id: int, name: str, owner_email: str | None, transfer_to: str | None, token_stdin: bool
) -> None:
    """Add PORTAL_ID (HubSpot's hub id) with a token of that portal, or reconnect it."""
    settings = load_settings()
    cipher = token_cipher(settings)
    token = _token(settings, token_stdin)

    async def main() -> PortalAdded:
        async with login_database(settings) as db:
            return await add_portal(
                db,
                cipher,
                portal_id,
                name,
                token,
                owner_email=owner_email,
                transfer_to=transfer_to,
                settings=settings,
            )

    click.echo(run_async(main()).describe())


_PAGE = 500


async def list_portals(db: Database) -> list[out.PortalListed]:
    """Every portal by id, with its last finished fetch of any type."""
    listed: list[out.PortalListed] = []
    after: int | None = None
    while page := await portal_page(db, after_id=after, limit=_PAGE):
        states = await portal_fetch_state(db, [p.id for p in page], list(ContentType))
        for summary in page:
            finished = [
                s for s in states if s.portal_id == summary.id and s.last_finished_at is not None
            ]
            last = max(
                finished, key=lambda s: s.last_finished_at or summary.created_at, default=None
            )
            listed.append(out.PortalListed(summary, last))
        after = page[-1].id
    return listed


@portal.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def list_(as_json: bool) -> None:
    """List portals: id, name, owner, members and last sync."""
    found = with_database(list_portals)
    out.echo_records(
        found, as_json, to_json=out.portal_json, table=out.portals_table, none="no portals"
    )
