"""What every request handler needs, built once per app, and the per-request user session.

    async with user_session(ctx, principal) as db:   # one transaction as smuves_app,
        ...                                            # app.user_id = the caller, local to it

`app.user_id` is set with ``set_config(…, is_local => true)``: it ends with the transaction,
so a pooled connection never carries one caller's identity into the next request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from smuves_sync.api.auth import Principal
from smuves_sync.db import Database, OnPool
from smuves_sync.db.portals import user_sign_in
from smuves_sync.orchestrator import TotalsCounter
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher


@dataclass(frozen=True)
class ApiContext(OnPool):
    """Settings, the app-role pool (`db` acts as smuves_app) and the secrets' keepers of one
    running app."""

    settings: Settings
    cipher: TokenCipher
    # Counts a fetch's types as it starts, paced by this process's one RateLimitRegistry.
    counter: TotalsCounter
    # Seconds between two looks at a run while its event stream is open.
    events_interval: float
    # Migration versions of the files this code ships; /healthz compares them to the ledger.
    expected_migrations: tuple[int, ...]


def current_context(request: Request) -> ApiContext:
    """FastAPI dependency: the running app's context (set up by its lifespan)."""
    context: ApiContext = request.app.state.context
    return context


Context = Annotated[ApiContext, Depends(current_context)]


@asynccontextmanager
async def user_session(
    ctx: ApiContext, principal: Principal, *, sign_in: bool = True
) -> AsyncIterator[Database]:
    """A transaction as the caller; with `sign_in`, their app_users row is made if missing."""
    async with ctx.db.as_user(principal.user_id) as db:
        if sign_in:
            await user_sign_in(db, principal.email, email_verified=principal.email_verified)
        yield db
