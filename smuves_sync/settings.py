"""Configuration from the environment (prefix ``SMUVES_``); no I/O happens here."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of smuves-sync; each field reads ``SMUVES_<FIELD_NAME>``."""

    model_config = SettingsConfigDict(env_prefix="SMUVES_", frozen=True, extra="ignore")

    # Unset means: start the embedded Postgres (pgserver) under `data_dir`. The operator's
    # login: migrations and on-call commands, which see every tenant.
    database_url: str | None = None
    # The runtime logins (migrations/0001_roles.sql): the API as smuves_api_login, the workers as
    # smuves_worker_login. Required with `database_url`, unless `shared_database_login` says
    # on purpose that the API and the workers log in with `database_url` too and switch role
    # with SET ROLE, which one RESET ROLE undoes. With the embedded server both are derived.
    api_database_url: str | None = None
    worker_database_url: str | None = None
    shared_database_login: bool = False
    # Names this install's runtime logins: <prefix>_api_login and <prefix>_worker_login
    # (empty: smuves_api_login and smuves_worker_login). Roles are the whole server's, so two
    # installs on one server give each its own prefix: each `smuves db migrate` then makes and
    # sets the passwords of its own logins only, and only they may connect to its database.
    role_prefix: str = Field(default="", pattern=r"^([a-z][a-z0-9_]{0,39})?$")
    data_dir: Path = Path(".smuves/pgdata")
    pool_min_size: int = Field(default=1, ge=1)
    pool_max_size: int = Field(default=10, ge=1)
    # Unset: the source tree's migrations/ (or the copy shipped in the package).
    migrations_dir: Path | None = None

    # Queue behaviour (DESIGN §4). The leases are the database's (table job_leases): a
    # worker cannot choose them.
    max_attempts: int = Field(default=3, ge=1)
    backoff_base_seconds: float = Field(default=10, ge=0)
    backoff_max_seconds: float = Field(default=600, ge=0)
    # A retry waits delay + up to this fraction of delay more, so retries do not stampede.
    backoff_jitter_ratio: float = Field(default=0.1, ge=0, le=1)
    # A claim passes over a portal's fetch jobs while this many of them run: they share the
    # portal's one HubSpot budget, and other portals wait for the slots.
    portal_max_running: int = Field(default=5, ge=1)
    # Each schedule fires at a stable offset of its portal within this window after its cron
    # time, so that many schedules of one cron expression do not all fire in the same second.
    schedule_spread_seconds: float = Field(default=600, ge=0)
    # The first part of the ids this process's workers record in jobs.locked_by (`prefix:pid`);
    # unset: the host name. Workers on one host, or hosts behind one name, can be told apart.
    worker_id: str | None = Field(default=None, min_length=1, max_length=100)
    poll_interval_seconds: float = Field(default=2, gt=0)
    reconcile_interval_seconds: float = Field(default=60, gt=0)
    # On SIGTERM a worker stops claiming and lets its jobs run this long; then it hands the
    # rest back (no attempt spent, cursor kept) and exits.
    shutdown_grace_seconds: float = Field(default=10, ge=0)

    # HubSpot (DESIGN §5).
    hubspot_base_url: str = "https://api.hubapi.com"
    hubspot_api_version: Literal["v3", "2026-03"] = "v3"
    hubspot_token: SecretStr | None = None
    hubspot_timeout_seconds: float = Field(default=30, gt=0)
    hubspot_max_retries: int = Field(default=5, ge=0)
    # The largest answer body read (decoded bytes). Reading stops past it and the request
    # fails, not retried: a page of 100 large blog posts is a few MB, so 50 MB means a broken
    # or hostile answer, which must not take the worker's memory with it.
    hubspot_max_response_bytes: int = Field(default=50_000_000, ge=1024)
    # The longest a short-window 429 (TEN_SECONDLY_ROLLING, SECONDLY, or no policy named)
    # pauses the portal, whatever its Retry-After says. A DAILY 429 is not capped: the job is
    # parked until the reset (one further than 48 h away is refused as malformed).
    hubspot_max_retry_after_seconds: float = Field(default=3600, gt=0)
    # How long requests wait out HubSpot being unreachable (no connection, 502/503/504: the
    # process's outage, `hubspot.outage`) before their jobs fail, no attempt spent meanwhile.
    hubspot_outage_max_seconds: float = Field(default=3600, gt=0)
    # How long starting a fetch (the API's POST …/fetches, `smuves sync`) may spend counting
    # its types with limit=1 requests. A type not counted by then gets its job without a
    # total, and the job counts it before its first page. 0: never count at the start.
    count_timeout_seconds: float = Field(default=5, ge=0)
    # Incremental fetches (workers/reads.py): a type with a completed fetch reads what changed
    # since that fetch's listing began, less this overlap (HubSpot's clock and ours may
    # differ, and an edit saved while the listing ran may be dated a little before it).
    incremental_overlap_seconds: float = Field(default=600, ge=0)
    # A type whose last full read began longer ago than this is read in full again: the
    # safety net for anything incremental reading can miss. Seconds, or ISO 8601 ("P7D").
    full_sync_every: timedelta = timedelta(days=7)

    # Secrets and outputs.
    # Fernet keys (`smuves secret-key`), comma-separated, newest first: the first encrypts
    # portal tokens, any of them decrypts (rotation). Checked by token_crypto, not here.
    secret_key: SecretStr | None = None
    jwt_secret: SecretStr | None = None
    # Checked against a bearer token's `aud` (Supabase user tokens: "authenticated"). The API
    # refuses to start without it unless `jwt_allow_any_audience` says so on purpose.
    jwt_audience: str | None = None
    jwt_allow_any_audience: bool = False
    export_dir: Path = Path("exports")

    # Content history: `smuves admin prune` deletes versions superseded more than this many
    # days ago (an object's current version is never pruned); 0 keeps every version.
    history_days: int = Field(default=90, ge=0)

    # HTTP API edges.
    # Larger request bodies are refused (413) before they are read to the end.
    max_request_bytes: int = Field(default=1024 * 1024, ge=1)
    # A changeset's file (`smuves changeset import`, POST /v1/portals/{id}/changesets) larger
    # than this is refused whole (exit 2, 422).
    changeset_max_bytes: int = Field(default=16 * 1024 * 1024, ge=1)
    # Set: /metrics on the API's port answers only `Authorization: Bearer <this>`. Unset: it is
    # served only on `smuves serve --metrics-port`, never on the tenants' port.
    metrics_token: SecretStr | None = None

    # The operators' dashboard (`smuves dashboard`). Bound to localhost, the login link it
    # prints is enough; bound to any other address it needs a password or a token of its own
    # (at least 16 characters; the sign-in page takes the password, /login?token=… the token).
    dashboard_password: SecretStr | None = None
    dashboard_token: SecretStr | None = None
    # Seconds between two looks at the database for a page's live parts (progress bars).
    dashboard_refresh_seconds: float = Field(default=1.0, gt=0)
