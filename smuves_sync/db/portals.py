"""Portals, their owners, members and users (portals.sql).

    portal = await portal_get(db, 123)                          # Portal | None (as visible)
    refused = await portal_needs_reconnect(db, 123)             # bool, None: no portal (any role)
    owner = await app_user_ensure(db, "ops@example.com")        # created (invited) when missing
    user = await app_user_for_token(db, email=None, portal_id=123)  # its owner (`dev token`)

The operator's side (`smuves portal add`, login role), inside one transaction::

    held = await portal_ownership(tx, 123)             # owner, other members; row locked
    portal = await portal_store(tx, 123, "Acme", owner, token_encrypted, "US/Eastern")
    removed = await portal_transfer(tx, 123, new_owner)  # emails of those who lost it

Key rotation (`smuves admin rotate-key`), one transaction per batch::

    batch = await portal_tokens_batch(tx, after=0, limit=500)   # locked, by portal id
    await portal_tokens_replace(tx, [(portal_id, new_ciphertext), ...])
    page = await portal_tokens_page(db, after=0, limit=500)    # its check: a read, no locks

The HTTP API's side runs in a `Database` scoped to the caller with `Database.as_user`:
row-level security then makes another user's portals invisible, so "not found" and "not
yours" look the same::

    async with db.as_user(user_id) as scoped:
        await user_sign_in(scoped, "ada@example.com", email_verified=True)   # made on first use
        portals = await portal_list(scoped)              # -> list[PortalAccess]

The dashboard's reads, as the login role across every tenant::

    page = await portal_page(db, after_id=None, limit=20)          # -> list[PortalSummary]
    state = await portal_fetch_state(db, [p.id for p in page], list(ContentType))

Counting a portal's types when a fetch starts needs its encrypted token, which the database
hands only to a member of the portal or to the operator (portal_token_for_member,
portal_token_for_operator)::

    sealed = await portal_token_for_member(scoped, 123)      # as the user: their portals only
    sealed = await portal_token_for_operator(login_db, 123)  # the login role: any portal

HubSpot refused the token: the portal is marked until it is reconnected. While counting, in
the session the count was planned in; a job's 401, under its live lease, with its whole run::

    await portal_mark_token_refused(scoped_or_login_db, 123)   # False: not the caller's portal
    failed = await portal_token_refused(worker_db, job_id, lease_token, error, public)
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job, JobStatus, Portal


@dataclass(frozen=True, slots=True)
class PortalAccess(Portal):
    """A portal as one user sees it: with that user's role in it."""

    role: str


@dataclass(frozen=True, slots=True)
class PortalSummary:
    """A portal as the operator sees it; whether a token is stored, never the token."""

    id: int
    name: str
    owner_email: str
    created_at: datetime
    has_token: bool
    token_rejected_at: datetime | None  # HubSpot refused the token then: reconnect it

    @property
    def needs_reconnect(self) -> bool:
        """True once HubSpot refused the stored token."""
        return self.token_rejected_at is not None

    # its members, the owner among them
    members: int


@dataclass(frozen=True, slots=True)
class TypeFetchState:
    """One content type of one portal: its last finished, last completed and open fetch."""

    portal_id: int
    content_type: ContentType
    last_job_id: int | None
    last_run_id: int | None
    last_status: JobStatus | None
    last_finished_at: datetime | None
    last_error: str | None
    done_job_id: int | None
    done_run_id: int | None
    done_finished_at: datetime | None
    done_processed: int | None
    open_job_id: int | None
    open_run_id: int | None
    open_status: JobStatus | None
    open_processed: int | None
    open_total: int | None


async def portal_get(db: Database, portal_id: int) -> Portal | None:
    """The portal `portal_id`, or None when it does not exist or is not visible."""
    return await db.one("portal_get", {"portal_id": portal_id}, row=model_row(Portal))


async def portal_needs_reconnect(db: Database, portal_id: int) -> bool | None:
    """Whether HubSpot refused portal `portal_id`'s token; None when the portal does not exist
    (or is not visible). Reads no column of the portal but its id and that mark."""
    found: bool | None = await db.one(
        "portal_needs_reconnect", {"portal_id": portal_id}, row=scalar_row
    )
    return found


async def app_user_ensure(db: Database, email: str, *, invited: bool = True) -> uuid.UUID:
    """The id of the user with `email` (any case), created when missing. A new `invited` user
    is taken over by the first sign-in that verifies the email (`user_sign_in`)."""
    params = {"email": email, "invited": invited}
    user_id: uuid.UUID = await db.only("app_user_ensure", params, row=scalar_row)
    return user_id


@dataclass(frozen=True, slots=True)
class TokenUser:
    """A user a development token may be signed for, and whether they are the portal's member."""

    id: uuid.UUID
    email: str
    member: bool


async def app_user_for_token(
    db: Database, *, email: str | None, portal_id: int | None
) -> TokenUser | None:
    """The user with `email` or, when None, the owner of `portal_id`; `member` says whether
    they are a member of `portal_id` (True when that is None). None: no such user or portal."""
    params = {"email": email, "portal_id": portal_id}
    return await db.one("app_user_for_token", params, row=model_row(TokenUser))


@dataclass(frozen=True, slots=True)
class PortalOwnership:
    """Who has a portal: its owner, and the emails of its other members."""

    id: int
    name: str
    owner_id: uuid.UUID
    owner_email: str
    other_members: list[str]


async def portal_ownership(db: Database, portal_id: int) -> PortalOwnership | None:
    """The portal's owner and other members, its row locked for the rest of the transaction
    (call it inside one); None when there is no such portal."""
    params = {"portal_id": portal_id}
    return await db.one("portal_ownership", params, row=model_row(PortalOwnership))


async def portal_store(
    db: Database,
    portal_id: int,
    name: str,
    owner_id: uuid.UUID,
    token_encrypted: bytes | None,
    time_zone: str,
) -> Portal:
    """Add the portal (owned by `owner_id`, who becomes its member) or give an existing one a
    new name, token and time zone, leaving its owner and members as they are."""
    params = {"portal_id": portal_id, "name": name, "owner_id": owner_id}
    more = {"token_encrypted": token_encrypted, "time_zone": time_zone}
    return await db.only("portal_store", {**params, **more}, row=model_row(Portal))


@dataclass(frozen=True, slots=True)
class StoredToken:
    """A portal's token as stored: encrypted under one of the keys."""

    id: int
    token_encrypted: bytes


async def portal_tokens_batch(db: Database, *, after: int, limit: int) -> list[StoredToken]:
    """Up to `limit` stored tokens of portals after `after`, by id, locked for the rest of the
    transaction (call it inside one)."""
    params = {"after": after, "limit": limit}
    return await db.all("portal_tokens_batch", params, row=model_row(StoredToken))


async def portal_tokens_page(db: Database, *, after: int, limit: int) -> list[StoredToken]:
    """Up to `limit` stored tokens of portals after `after`, by id, without locking them."""
    params = {"after": after, "limit": limit}
    return await db.all("portal_tokens_page", params, row=model_row(StoredToken))


async def portal_tokens_replace(db: Database, tokens: Sequence[tuple[int, bytes]]) -> int:
    """Store new ciphertexts (portal id, token) for tokens of a locked batch; how many."""
    if not tokens:
        return 0
    params = {"ids": [i for i, _ in tokens], "tokens": [t for _, t in tokens]}
    return await db.execute("portal_tokens_replace", params)


async def portal_transfer(db: Database, portal_id: int, owner_id: uuid.UUID) -> list[str]:
    """Make `owner_id` the portal's owner and only member; the emails of everyone who lost it
    (what they were told of its runs goes too)."""
    params = {"portal_id": portal_id, "owner_id": owner_id}
    return await db.all("portal_transfer", params, row=scalar_row)


async def portal_page(
    db: Database, *, portal_id: int | None = None, after_id: int | None = None, limit: int = 20
) -> list[PortalSummary]:
    """Portals by id after `after_id` (None: from the first); `portal_id`: only that one."""
    params = {"portal_id": portal_id, "after_id": after_id, "limit": limit}
    return await db.all("portal_page", params, row=model_row(PortalSummary))


async def portal_fetch_state(
    db: Database, portal_ids: Sequence[int], content_types: Sequence[ContentType]
) -> list[TypeFetchState]:
    """Each portal's fetch state for each type, by portal and in the order of `content_types`."""
    params = {"portal_ids": list(portal_ids), "content_types": [str(t) for t in content_types]}
    return await db.all("portal_fetch_state", params, row=model_row(TypeFetchState))


# -- as the signed-in user (Database.as_user) -----------------------------------------------


async def user_sign_in(
    db: Database, email: str | None, *, email_verified: bool = False
) -> uuid.UUID:
    """Make sure the scoped user has an app_users row (created on first use); its id.

    `email` counts only when `email_verified` (the identity provider checked it): then a
    first sign-in takes over the row `portal add --owner` invited with that email."""
    params = {"email": email, "email_verified": email_verified}
    user_id = await db.only("user_sign_in", params, row=scalar_row)
    return uuid.UUID(str(user_id))


async def portal_list(db: Database) -> list[PortalAccess]:
    """The scoped user's portals, by id."""
    return await db.all("portal_access_list", {"portal_id": None}, row=model_row(PortalAccess))


async def portal_access(db: Database, portal_id: int) -> PortalAccess | None:
    """The portal as the scoped user sees it; None when absent or not theirs."""
    params = {"portal_id": portal_id}
    return await db.one("portal_access_list", params, row=model_row(PortalAccess))


async def portal_connect(
    db: Database, portal_id: int, name: str, token_encrypted: bytes, time_zone: str
) -> tuple[PortalAccess, bool] | None:
    """Add the portal with the scoped user as owner, or give an owned one a new name, token and
    time zone; (portal, created). None: the id belongs to a portal the user does not own.
    The caller has had HubSpot confirm that the token belongs to `portal_id`."""
    params = {
        "portal_id": portal_id,
        "name": name,
        "token_encrypted": token_encrypted,
        "time_zone": time_zone,
    }
    added = await db.one("portal_connect", params, row=model_row(PortalAccess))
    if added is not None:
        return added, True
    renewed = await db.one("portal_reconnect", params, row=model_row(PortalAccess))
    return (renewed, False) if renewed else None


async def portal_delete(db: Database, portal_id: int) -> bool:
    """Delete a portal the scoped user owns, with everything of it; False when not allowed."""
    return await db.execute("portal_delete", {"portal_id": portal_id}) > 0


# -- tokens for counting up front -------------------------------------------------------------


async def portal_token_for_member(db: Database, portal_id: int) -> bytes | None:
    """The encrypted token of a portal of the scoped user (`Database.as_user`); None when it
    is not theirs, or has no token."""
    found: bytes | None = await db.one(
        "portal_token_for_member", {"portal_id": portal_id}, row=scalar_row
    )
    return found


async def portal_token_for_operator(db: Database, portal_id: int) -> bytes | None:
    """The encrypted token of any portal, for the operator (the login role); None when the
    portal does not exist or has no token."""
    found: bytes | None = await db.one(
        "portal_token_for_operator", {"portal_id": portal_id}, row=scalar_row
    )
    return found


async def portal_mark_token_refused(db: Database, portal_id: int) -> bool:
    """Mark the portal's token as refused by HubSpot (a member's session or the login role);
    False when the caller may not (not a member, or no such portal)."""
    marked: bool = await db.only(
        "portal_mark_token_refused", {"portal_id": portal_id}, row=scalar_row
    )
    return marked


async def portal_token_refused(
    db: Database,
    job_id: int,
    lease_token: uuid.UUID,
    error: str,
    error_public: str,
    *,
    now: datetime | None = None,
) -> list[Job]:
    """Fail every open job of the job's run with `error` (`error_public` for its users) and
    mark its portal's token refused, under the job's live lease; the jobs failed (none: the
    lease is lost)."""
    params = {"job_id": job_id, "lease_token": lease_token, "now": now}
    params |= {"error": error, "error_public": error_public}
    return await db.all("portal_token_refused", params, row=model_row(Job))
