"""`smuves dev token [--email E] [--portal P]`: a bearer token for the HTTP API of a playground.

    curl -H "Authorization: Bearer $(smuves dev token)" localhost:8000/v1/portals

The token is signed with the settings' SMUVES_JWT_SECRET for SMUVES_JWT_AUDIENCE (the ones
`smuves serve` checks; `make demo` writes both to .env), for a user who is already here: the
one with --email, else the owner of --portal, else operator@localhost (who owns the portals
`portal add` gives no owner, the demo's among them). With --portal the user must be a member
of it. Its email counts as verified. Missing JWT settings, an unknown user or a portal the
user is not a member of exit 2 with one line, before anything is signed. In production the
identity provider issues the tokens; this one is for trying the API out.
"""

from __future__ import annotations

from datetime import timedelta

import click

from smuves_sync.api.auth import TokenVerifier, mint_token
from smuves_sync.cli.common import ID, ExitCode, command_error
from smuves_sync.cli.ops import with_database
from smuves_sync.cli.portal import DEFAULT_OWNER, valid_email
from smuves_sync.cli.session import load_settings
from smuves_sync.db import Database
from smuves_sync.db.portals import TokenUser, app_user_for_token
from smuves_sync.errors import ConfigurationError, InvalidInput, NotFound


@click.group()
def dev() -> None:
    """Helpers for a development playground (make demo)."""


async def token_user(db: Database, email: str | None, portal_id: int | None) -> TokenUser:
    """The user a token is for (see the module); NotFound or InvalidInput saying why not."""
    wanted = email if email is not None or portal_id is not None else DEFAULT_OWNER
    user = await app_user_for_token(db, email=wanted, portal_id=portal_id)
    if user is None:
        if wanted is None:
            raise NotFound(f"portal {portal_id} not found (see `smuves portal list`)")
        raise NotFound(
            f"no user {wanted} here: `smuves portal add … --owner {wanted}` makes one, "
            "or see `smuves portal list`"
        )
    if not user.member:
        raise InvalidInput(
            f"{user.email} is not a member of portal {portal_id}: a token for them would see "
            "none of it (see `smuves portal list`)"
        )
    return user


@dev.command("token")
@click.option("--email", default=None, help=f"Whose token (default: {DEFAULT_OWNER}).")
@click.option(
    "--portal", "portal_id", type=ID, default=None, help="A portal the user must be a member of."
)
@click.option(
    "--hours",
    type=click.IntRange(1, 24 * 30),
    default=12,
    show_default=True,
    help="How long the token is valid.",
)
def token(email: str | None, portal_id: int | None, hours: int) -> None:
    """Print a bearer token for the HTTP API, signed with SMUVES_JWT_SECRET."""
    settings = load_settings()
    try:
        # The checks `smuves serve` makes: a token it would refuse is never printed.
        TokenVerifier(
            settings.jwt_secret,
            audience=settings.jwt_audience,
            allow_any_audience=settings.jwt_allow_any_audience,
        )
    except ConfigurationError as error:
        hint = "`make demo` writes the JWT settings to .env"
        raise command_error(f"{error} ({hint})", ExitCode.USAGE) from None
    try:
        checked = valid_email(email, "--email")
    except InvalidInput as error:
        raise command_error(str(error), ExitCode.USAGE) from None
    assert settings.jwt_secret is not None  # TokenVerifier refuses a missing one

    async def work(db: Database) -> TokenUser:
        return await token_user(db, checked, portal_id)

    user = with_database(work)
    click.echo(
        mint_token(
            settings.jwt_secret,
            user.id,
            user.email,
            audience=settings.jwt_audience,
            lifetime=timedelta(hours=hours),
        )
    )
