#!/usr/bin/env python3
"""`make demo`: a full sync and an export on a machine with no database and no HubSpot account.

1. Starts the embedded Postgres (SMUVES_DATABASE_URL unset; set it to use your own) and
   applies the migrations.
2. Starts the bundled fake HubSpot in a subprocess: portal 1001 with about 20,000 objects
   over the five content types, under a generous rate limit.
3. Adds the portal (its token stored encrypted), fetches everything with live progress bars,
   exports the site pages to CSV, and prints where the file is and a summary.

    scripts/demo.py [--scale 0.1]        # a smaller portal, for a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from smuves_sync.cli.common import ExitCode
from smuves_sync.cli.export import export_portal
from smuves_sync.cli.portal import add_portal
from smuves_sync.cli.session import load_settings, login_database
from smuves_sync.cli.sync import configure_logging, sync_portal
from smuves_sync.db import database_url, migrate
from smuves_sync.fake_hubspot import PortalSpec, ServerConfig, serve_in_subprocess
from smuves_sync.models import Export, ExportFormat
from smuves_sync.settings import Settings
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from smuves_sync.workers.follow import RunSnapshot

DEMO_PORTAL = 1001
DEMO_TOKEN = "demo-private-app-token"


def demo_portal(scale: float = 1.0) -> PortalSpec:
    """Portal 1001: 6,000 site pages, 3,000 landing pages, 6,000 posts, 5 tables x 1,000 rows."""

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
    )


@dataclass(frozen=True)
class DemoResult:
    """What the demo did, for its summary (and its test)."""

    code: ExitCode
    fetch: RunSnapshot | None
    export: Export | None
    seconds: float


@asynccontextmanager
async def _database(settings: Settings) -> AsyncIterator[Settings]:
    """Settings whose database stays up (and migrated) for the whole demo."""
    async with database_url(settings) as url:
        await migrate(url, settings.migrations_dir)
        yield settings.model_copy(update={"database_url": url})


async def run_demo(settings: Settings, console: Console, *, scale: float = 1.0) -> DemoResult:
    """Start the fake portal, add it, sync it, export its site pages; the outcome."""
    started = time.monotonic()
    spec = demo_portal(scale)
    # Generous: the demo shows the pipeline, not HubSpot's 190-per-10-s budget.
    config = ServerConfig(ten_second_limit=10_000, daily_limit=None)
    with serve_in_subprocess([spec], config) as fake:
        console.print(f"fake HubSpot portal {DEMO_PORTAL} serving at {fake.base_url}")
        demo_settings = settings.model_copy(update={"hubspot_base_url": fake.base_url})
        async with _database(demo_settings) as ready:
            async with login_database(ready) as db:
                cipher = TokenCipher(ready.secret_key)
                await add_portal(db, cipher, DEMO_PORTAL, "Demo portal", SecretStr(DEMO_TOKEN))
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
    return DemoResult(code, fetch, export, time.monotonic() - started)


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
        table.add_row("export file", str(result.export.path))
        table.add_row("file size", f"{result.export.bytes or 0:,} bytes")
    table.add_row("elapsed", f"{result.seconds:.1f} s")
    console.print(table)
    if result.export is not None:
        console.print(f"The CSV is at [bold]{result.export.path}[/]")


def main() -> int:
    """Run the demo; the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=1.0, help="portal size factor (1 = 20k)")
    args = parser.parse_args()
    overrides: dict[str, Any] = {}
    if not os.environ.get("SMUVES_SECRET_KEY"):
        # A key of the demo's own, for the fake portal's token only.
        overrides["secret_key"] = SecretStr(new_secret_key())
    settings = load_settings(**overrides)
    console = Console()
    configure_logging(console)
    if settings.database_url is None:
        console.print(f"starting the embedded Postgres under {settings.data_dir}")
    result = asyncio.run(run_demo(settings, console, scale=args.scale))
    print_summary(console, result)
    return int(result.code)


if __name__ == "__main__":
    raise SystemExit(main())
