#!/usr/bin/env python3
"""`make demo`: a full sync and an export on a machine with no database and no HubSpot account.

1. Starts the embedded Postgres (SMUVES_DATABASE_URL unset; set it to use your own, with
   SMUVES_WORKER_DATABASE_URL for the workers' login: README, Security) and applies the
   migrations.
2. Starts the bundled fake HubSpot in a subprocess: portal 1001 with about 20,500 objects
   over every content type, under a generous rate limit.
3. Adds the portal (its token stored encrypted), fetches everything with live progress bars,
   exports the site pages to CSV, and prints where the file is and a summary.
4. Leaves a playground: the settings it used go to .env (SMUVES_ENV_FILE), which every `smuves`
   command run here reads, and `make fake` serves the same fake portal at the same address
   again, so `smuves sync 1001`, `smuves worker` and `smuves serve` work afterwards.

The fake's address is the one .env records (127.0.0.1:8711 on a first run). When something
listens there already, the demo uses it if it is the demo's fake (`make fake`: its account
details name portal 1001 for the demo's token); anything else is refused in one line, exit code
2, and .env is left as it was: the address it records stays the one `make fake` serves.

    scripts/demo.py [--scale 0.1]        # a smaller portal (or SMUVES_DEMO_SCALE=0.1)
    scripts/demo.py --serve-fake         # `make fake`: the demo's portal, until Ctrl-C
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import signal
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from smuves_sync.cli.common import ExitCode
from smuves_sync.cli.envfile import env_file, update_env_file
from smuves_sync.cli.export import export_portal
from smuves_sync.cli.portal import add_portal
from smuves_sync.cli.session import load_settings, login_database
from smuves_sync.cli.sync import configure_logging, sync_portal
from smuves_sync.db import DbRole, database_url, migrate, with_login_urls
from smuves_sync.db.pool import runtime_conninfo
from smuves_sync.errors import ConfigurationError
from smuves_sync.export_files import export_file_path
from smuves_sync.models import Export, ExportFormat
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
    serves_portal,
)
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from smuves_sync.workers.follow import RunSnapshot

DEMO_PORTAL = 1001
DEMO_TOKEN = "demo-private-app-token"
# Where the fake listens on a first run; .env records it, so that `make fake` serves it there
# later and a demo run again finds it there.
DEMO_FAKE_PORT = 8711
_LOCAL_HOSTS = ("127.0.0.1", "localhost")
# The `aud` the playground's `smuves serve` checks: what Supabase's user tokens say.
DEMO_AUDIENCE = "authenticated"
SCALE_VARIABLE = "SMUVES_DEMO_SCALE"


def demo_portal(scale: float = 1.0) -> PortalSpec:
    """Portal 1001: 6,000 site pages, 3,000 landing pages, 6,000 posts, 5 tables x 1,000 rows,
    45 blog authors, 150 tags, 300 URL redirects and 5 blogs."""

    def n(count: int) -> int:
        return max(1, round(count * scale))

    return PortalSpec(
        portal_id=DEMO_PORTAL,
        token=DEMO_TOKEN,
        seed=2024,
        site_pages=n(6000),
        landing_pages=n(3000),
        blog_posts=n(6000),
        hubdb_tables=5,
        rows_per_table=n(1000),
        archived_share=0.05,
        blog_authors=n(45),
        blog_tags=n(150),
        url_redirects=n(300),
        blogs=n(5),
    )


def demo_fake_config() -> ServerConfig:
    """Generous limits: the demo shows the pipeline, not HubSpot's 190-per-10-s budget."""
    return ServerConfig(ten_second_limit=10_000, daily_limit=None)


@dataclass(frozen=True)
class DemoResult:
    """What the demo did, for its summary (and its test)."""

    code: ExitCode
    fetch: RunSnapshot | None
    export: Export | None
    seconds: float
    hubspot_base_url: str = ""
    # where the export's file was written
    export_file: Path | None = None


@asynccontextmanager
async def _database(settings: Settings) -> AsyncIterator[Settings]:
    """Settings whose database stays up (and migrated) for the whole demo."""
    async with database_url(settings) as url:
        await migrate(url, settings.migrations_dir, role_prefix=settings.role_prefix)
        yield with_login_urls(settings, url)


@contextmanager
def _fake_portal(
    console: Console, spec: PortalSpec, host: str, port: int, serving: str | None
) -> Iterator[str]:
    """The fake's base URL: `serving` (the demo's fake, already up), else one started here."""
    if serving is not None:
        console.print(f"fake HubSpot portal {DEMO_PORTAL} already serving at {serving}: using it")
        yield serving
        return
    with serve_in_subprocess([spec], demo_fake_config(), host=host, port=port) as fake:
        console.print(f"fake HubSpot portal {DEMO_PORTAL} serving at {fake.base_url}")
        yield fake.base_url


async def run_demo(
    settings: Settings,
    console: Console,
    *,
    scale: float = 1.0,
    fake_port: int = 0,
    fake_host: str = "127.0.0.1",
    serving: str | None = None,
) -> DemoResult:
    """Start the fake portal (or use the one `serving` at that URL), add it, sync it, export
    its site pages; the outcome."""
    started = time.monotonic()
    spec = demo_portal(scale)
    with _fake_portal(console, spec, fake_host, fake_port, serving) as base_url:
        demo_settings = settings.model_copy(update={"hubspot_base_url": base_url})
        async with _database(demo_settings) as ready:
            async with login_database(ready) as db:
                cipher = TokenCipher(ready.secret_key)
                await add_portal(
                    db, cipher, DEMO_PORTAL, "Demo portal", SecretStr(DEMO_TOKEN), settings=ready
                )
            console.print(f"portal {DEMO_PORTAL} added (token stored encrypted)")
            code, fetch = await sync_portal(
                ready, DEMO_PORTAL, None, wait=True, concurrency=5, console=console
            )
            export: Export | None = None
            if code is ExitCode.OK:
                code, export = await export_portal(
                    ready,
                    DEMO_PORTAL,
                    "site_page",
                    ExportFormat.CSV,
                    out=None,
                    wait=True,
                    console=console,
                )
    written = export_file_path(settings.export_dir, export) if export is not None else None
    return DemoResult(code, fetch, export, time.monotonic() - started, base_url, written)


def print_summary(console: Console, result: DemoResult) -> None:
    """The closing summary: what was fetched, where the file is, how long it took."""
    table = Table(title="smuves-sync demo")
    table.add_column("what")
    table.add_column("result", justify="right")
    if result.fetch is not None:
        run = result.fetch.run
        objects = sum(j.processed for j in result.fetch.jobs)
        table.add_row(f"fetch run {run.id}", f"{run.status}: {objects:,} objects")
        for job in result.fetch.jobs:
            table.add_row(f"  {job.content_type}", f"{job.processed:,}")
    if result.export is not None and result.export.row_count is not None:
        table.add_row("site pages exported", f"{result.export.row_count:,} rows")
        table.add_row("export file", str(result.export_file))
        table.add_row("file size", f"{result.export.bytes or 0:,} bytes")
    table.add_row("elapsed", f"{result.seconds:.1f} s")
    console.print(table)
    if result.export is not None:
        console.print(f"The CSV is at [bold]{result.export_file}[/]")


def playground_settings(settings: Settings) -> Settings:
    """`settings` with what the playground needs and the operator has not set: a new secret
    key, a new JWT secret and the audience (an earlier demo's, from .env, are kept)."""
    missing: dict[str, Any] = {}
    if settings.secret_key is None:
        missing["secret_key"] = SecretStr(new_secret_key())
    if settings.jwt_secret is None:
        missing["jwt_secret"] = SecretStr(secrets.token_urlsafe(32))
    if not settings.jwt_audience and not settings.jwt_allow_any_audience:
        missing["jwt_audience"] = DEMO_AUDIENCE
    return settings.model_copy(update=missing)


def write_playground(path: Path, settings: Settings, base_url: str, scale: float) -> None:
    """Record in the dotenv file `path` the settings the demo used (other lines are kept)."""
    values: dict[str, str] = {}
    if settings.database_url:
        values["SMUVES_DATABASE_URL"] = settings.database_url
        for name, url in (
            ("SMUVES_API_DATABASE_URL", settings.api_database_url),
            ("SMUVES_WORKER_DATABASE_URL", settings.worker_database_url),
        ):
            if url:
                values[name] = url
        if settings.shared_database_login:
            values["SMUVES_SHARED_DATABASE_LOGIN"] = "1"
    else:
        values["SMUVES_DATA_DIR"] = str(settings.data_dir)
    values["SMUVES_HUBSPOT_BASE_URL"] = base_url
    values["SMUVES_HUBSPOT_TOKEN"] = DEMO_TOKEN
    for name, secret in (("SECRET_KEY", settings.secret_key), ("JWT_SECRET", settings.jwt_secret)):
        if secret is not None:
            values[f"SMUVES_{name}"] = secret.get_secret_value()
    if settings.jwt_audience:
        values["SMUVES_JWT_AUDIENCE"] = settings.jwt_audience
    values["SMUVES_EXPORT_DIR"] = str(settings.export_dir)
    values[SCALE_VARIABLE] = str(scale)
    update_env_file(
        path,
        values,
        header="The playground `make demo` left: every `smuves` command run here reads this file\n"
        "(environment variables win). `make fake` serves portal 1001 at SMUVES_HUBSPOT_BASE_URL.\n"
        "SMUVES_HUBSPOT_TOKEN is the fake portal's token. Never commit this file.",
    )


def print_playground(console: Console, path: Path, base_url: str, *, kept: bool = False) -> None:
    """The closing lines: what the demo left behind and what to run next (`kept`: the fake it
    used was serving before it and still is)."""
    fake = (
        f"The fake portal at {base_url} keeps serving (make fake); with it:\n"
        if kept
        else f"Keep the fake portal serving at {base_url} with [bold]make fake[/] (another "
        "terminal), then:\n"
    )
    console.print(
        f"\nThe settings this demo used are in [bold]{path}[/], read by every `smuves` command "
        f"run here.\n{fake}"
        "  .venv/bin/smuves sync 1001     fetch the portal again, with progress bars\n"
        "  .venv/bin/smuves worker        work queued fetches and exports until Ctrl-C\n"
        "  .venv/bin/smuves serve         the HTTP API on :8000 (README: HTTP API)\n"
        "  .venv/bin/smuves dev token     a bearer token for the HTTP API",
        highlight=False,
    )


def local_fake_address(base_url: str) -> tuple[str, int] | None:
    """Host and port of `base_url` when it is a local fake's address (http, loopback, a port)."""
    url = urlsplit(base_url)
    if url.scheme != "http" or url.hostname not in _LOCAL_HOSTS or not url.port:
        return None
    return url.hostname, url.port


def _free(host: str, port: int) -> bool:
    """True when nothing listens at host:port (probed as the fake binds: SO_REUSEADDR, so the
    connections an earlier fake left in TIME_WAIT do not count)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _recorded_scale(path: Path | None) -> float | None:
    """The scale of the demo's portal the environment or .env records, if any."""
    recorded = dotenv_values(path) if path is not None and path.exists() else {}
    text = os.environ.get(SCALE_VARIABLE) or recorded.get(SCALE_VARIABLE)
    return float(text) if text else None


@dataclass(frozen=True)
class FakePlan:
    """Where the demo's fake is: to be started at host:port, or `serving` there already."""

    host: str
    port: int
    serving: str | None
    scale: float


def plan_fake(settings: Settings, path: Path | None, scale: float | None) -> FakePlan | str:
    """Where this demo's fake goes: the address .env records (else 127.0.0.1:8711), started
    there, or used as it is when the demo's fake serves there already; or why it cannot be."""
    host, port = local_fake_address(settings.hubspot_base_url) or ("127.0.0.1", DEMO_FAKE_PORT)
    base_url = f"http://{host}:{port}"
    if _free(host, port):
        return FakePlan(host, port, None, 1.0 if scale is None else scale)
    if not serves_portal(base_url, DEMO_PORTAL, DEMO_TOKEN):
        return (
            f"cannot serve the demo's fake HubSpot at {base_url}: something else listens there; "
            f"stop it, or set SMUVES_HUBSPOT_BASE_URL in {path or '.env'} to a free local port"
        )
    # `make fake` serves the portal at the recorded scale: the demo takes that one.
    serving_scale = _recorded_scale(path) or 1.0
    if scale is not None and scale != serving_scale:
        return (
            f"the demo's fake at {base_url} serves the portal at scale {serving_scale:g}, not "
            f"{scale:g}: stop it (make fake) to run the demo at scale {scale:g}"
        )
    return FakePlan(host, port, base_url, serving_scale)


def _stop_on_sigterm() -> None:
    def stop(_signum: int, _frame: Any) -> NoReturn:
        raise SystemExit(0)  # unwinds through the context that stops the fake

    signal.signal(signal.SIGTERM, stop)


def serve_fake(console: Console, scale: float | None) -> int:
    """`make fake`: the demo's portal at the address in the settings, until Ctrl-C/SIGTERM."""
    settings = load_settings()
    if scale is None:
        scale = _recorded_scale(env_file()) or 1.0
    address = local_fake_address(settings.hubspot_base_url)
    if address is None:
        console.print(
            f"SMUVES_HUBSPOT_BASE_URL is {settings.hubspot_base_url}, not a local fake: run "
            "`make demo` first (it records the fake's address in .env)",
            soft_wrap=True,
        )
        return int(ExitCode.USAGE)
    host, port = address
    if not _free(host, port):
        base_url = f"http://{host}:{port}"
        taken = (
            f"the demo's fake portal is serving at {base_url} already"
            if serves_portal(base_url, DEMO_PORTAL, DEMO_TOKEN)
            else f"something else listens at {base_url}; stop it first"
        )
        console.print(f"make fake: {taken}", highlight=False, soft_wrap=True)
        return int(ExitCode.USAGE)
    _stop_on_sigterm()
    with serve_in_subprocess(
        [demo_portal(scale)], demo_fake_config(), host=host, port=port
    ) as fake:
        console.print(
            f"fake HubSpot portal {DEMO_PORTAL} (token {DEMO_TOKEN}) serving at {fake.base_url}; "
            "Ctrl-C stops it",
            highlight=False,
            soft_wrap=True,
        )
        try:
            return fake.process.wait()
        except KeyboardInterrupt:
            return 0


def main() -> int:
    """Run the demo (or, with --serve-fake, only its fake portal); the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=None, help="portal size factor (1 = 20k)")
    parser.add_argument(
        "--serve-fake", action="store_true", help="only serve the demo's fake portal (make fake)"
    )
    args = parser.parse_args()
    console = Console()
    if args.serve_fake:
        return serve_fake(console, args.scale)
    # The environment, then .env: a demo run again keeps the key its portal's token is under.
    settings = playground_settings(load_settings())
    path = env_file()
    # Without --scale, SMUVES_DEMO_SCALE set in the environment sizes the portal too (the one
    # .env records is the size its fake serves at, which a fresh demo does not keep).
    scale = args.scale if args.scale is not None else _recorded_scale(None)
    plan = plan_fake(settings, path, scale)
    if isinstance(plan, str):
        console.print(plan, highlight=False, soft_wrap=True)
        return int(ExitCode.USAGE)
    try:
        TokenCipher(settings.secret_key)
        if settings.database_url is not None:  # the embedded server's logins are derived
            runtime_conninfo(settings, DbRole.WORKER)
    except ConfigurationError as error:
        console.print(str(error), highlight=False)
        return int(ExitCode.USAGE)
    configure_logging(console)
    if settings.database_url is None:
        console.print(f"starting the embedded Postgres under {settings.data_dir}")
    result = asyncio.run(
        run_demo(
            settings,
            console,
            scale=plan.scale,
            fake_host=plan.host,
            fake_port=plan.port,
            serving=plan.serving,
        )
    )
    print_summary(console, result)
    if path is not None:
        write_playground(path, settings, result.hubspot_base_url, plan.scale)
        print_playground(console, path, result.hubspot_base_url, kept=plan.serving is not None)
    return int(result.code)


if __name__ == "__main__":
    raise SystemExit(main())
