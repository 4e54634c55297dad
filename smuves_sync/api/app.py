"""The FastAPI application: `create_app(settings)`.

    app = create_app(Settings())                 # opens its smuves_app pool in its lifespan
    app = create_app(settings, pool=app_pool)    # or uses a pool its caller owns (tests)
    app = create_app(settings, metrics_port=9100)   # /metrics also on a listener of its own

Secrets are checked when the app is made, not at the first request: without
``SMUVES_JWT_SECRET`` no token can be verified, without ``SMUVES_JWT_AUDIENCE`` (or
``SMUVES_JWT_ALLOW_ANY_AUDIENCE``) a token meant for another application would pass, and
without a valid ``SMUVES_SECRET_KEY`` no portal token can be stored: each is a
`ConfigurationError`. The middlewares in `edges` authenticate and limit requests before a
route reads their body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from pydantic import SecretStr

# Imported for its side effect: the HubSpot counters register with prometheus-client.
import smuves_sync.metrics  # noqa: F401
from smuves_sync.api import (
    changesets,
    content,
    exports,
    history,
    notifications,
    ops,
    portals,
    push,
    runs,
)
from smuves_sync.api.auth import TokenVerifier
from smuves_sync.api.context import ApiContext
from smuves_sync.api.edges import install_edges
from smuves_sync.api.errors import install_error_handlers
from smuves_sync.db import DbRole, Pool, open_pool
from smuves_sync.db.migrations import discover, find_migrations_dir
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.orchestrator import TotalsCounter
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher, new_secret_key

TITLE = "smuves-sync"
DESCRIPTION = (
    "Fetch a HubSpot portal's CMS content into Postgres, follow the runs, export the content. "
    "Every /v1 call needs `Authorization: Bearer <JWT>` (HS256, `sub` = your user id, `aud` = "
    "the audience the server is configured with); without a valid one the answer is 401 before "
    "any body is read. Bodies over 1 MiB (unless configured otherwise) answer 413. "
    "Errors are `{code, message}`; what is not yours answers 404, like what does not exist."
)


def create_app(
    settings: Settings,
    *,
    pool: Pool | None = None,
    events_interval: float | None = None,
    metrics_port: int | None = None,
) -> FastAPI:
    """The API app; with `pool` None it opens (and closes) a smuves_app pool itself.

    With `metrics_port`, requests that arrive on that port are served /metrics and nothing else.
    """
    verifier = TokenVerifier(
        settings.jwt_secret,
        audience=settings.jwt_audience,
        allow_any_audience=settings.jwt_allow_any_audience,
    )
    cipher = TokenCipher(settings.secret_key)
    # One registry of per-portal HubSpot budgets for the process: every fetch started here
    # counts its types through it.
    counter = TotalsCounter(settings, RateLimitRegistry(), cipher)
    expected = tuple(m.version for m in discover(find_migrations_dir(settings.migrations_dir)))
    interval = events_interval if events_interval is not None else settings.poll_interval_seconds

    def context_for(app_pool: Pool) -> ApiContext:
        return ApiContext(
            settings=settings,
            pool=app_pool,
            cipher=cipher,
            counter=counter,
            events_interval=interval,
            expected_migrations=expected,
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if pool is not None:
            yield
            return
        async with open_pool(settings, role=DbRole.APP) as own_pool:
            app.state.context = context_for(own_pool)
            yield

    app = FastAPI(
        title=TITLE,
        description=DESCRIPTION,
        version="1",
        lifespan=lifespan,
    )
    app.state.verifier = verifier
    app.state.metrics_token = settings.metrics_token
    if pool is not None:
        app.state.context = context_for(pool)
    install_error_handlers(app)
    upload = changesets.UPLOAD_PATH
    install_edges(
        app, verifier=verifier, settings=settings, metrics_port=metrics_port, upload_path=upload
    )
    for module in (portals, content, history, runs, exports, notifications, ops, changesets, push):
        app.include_router(module.router)
    return app


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document; needs no secrets and opens nothing."""
    placeholders = Settings(
        jwt_secret=SecretStr("placeholder: only the document is built"),
        jwt_audience="placeholder",
        secret_key=SecretStr(new_secret_key()),
    )
    return create_app(placeholders).openapi()
