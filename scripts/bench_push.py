#!/usr/bin/env python3
"""Benchmark a push: 10,000 field edits across 5,000 site pages and 500 HubDB rows, pushed to
the fake HubSpot at its rate limit (190 requests per rolling 10 s), with people editing.

The portal is fetched first, then one changeset per type is planted as an import of an edit
export would make it (pages: most of them two fields, the rest one; rows: one cell each, in one
table; `--tables N` spreads them over N, each costing four requests more: two checks of its
draft, its publication and a read-back). Before the push, people edit 1 % of the edited pages'
changed field (those are conflicts) and 1 % another field (rebased and written); while it runs,
1 % of the pages read are edited by a person between the push's read and its write (a field no
changeset edits).
Both pushes then run at once, in this process, as one worker with two slots.

    python scripts/bench_push.py              # a table
    python scripts/bench_push.py --json       # the figures below
    python scripts/bench_push.py --pages 500 --rows 100    # smaller, while developing

Figures: `requests_per_100_items` (every request the push sent, per 100 items; target ≤ 3.1:
a read, a write and a read-back per batch), `wall_ratio_to_bound` (the push's wall time over
the time its requests need at the rate limit; target ≤ 1.1), `applied`, `conflicts`,
`lost_human_edits` (people's values HubSpot no longer shows; target 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smuves_sync.db import Database, DbRole, pool_for
from smuves_sync.db.changesets import changeset_counts
from smuves_sync.db.portals import app_user_ensure, portal_store
from smuves_sync.models import ContentType, JobKind
from smuves_sync.orchestrator import start_fetch
from smuves_sync.push_start import start_push
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    FakeControl,
    PortalSpec,
    ServerConfig,
    WriteFault,
    WriteFaultKind,
    serve_in_subprocess,
)
from smuves_sync.testing.push_bench import lost_human_edits, plant_changeset
from smuves_sync.testing.scratch import scratch_database, scratch_server
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from smuves_sync.workers.runner import Runner

PORTAL = 4712
TOKEN = "bench-private-app-token"
SECRET = new_secret_key()
LIMIT_PER_10S = 190
PAGE, ROW = ContentType.SITE_PAGE, ContentType.HUBDB_ROW


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def settings_for(url: str, base_url: str) -> Settings:
    return Settings(
        database_url=url,
        hubspot_base_url=base_url,
        secret_key=SecretStr(SECRET),
        poll_interval_seconds=0.5,
    )


def page_edits(ids: list[str], edits: int) -> dict[str, dict[str, Any]]:
    """`edits` field edits over the pages: two each (title, description), then one."""
    twice = max(0, min(len(ids), edits - len(ids)))
    out: dict[str, dict[str, Any]] = {}
    for n, hubspot_id in enumerate(ids):
        out[hubspot_id] = {"htmlTitle": f"Bench title {hubspot_id}"}
        if n < twice:
            out[hubspot_id]["metaDescription"] = f"Bench description {hubspot_id}"
    return out


def people_before(fake: FakeControl, ids: list[str]) -> list[tuple[str, str, Any]]:
    """1 % of the pages: their title (a conflict); 1 % more: their name (rebased)."""
    made: list[tuple[str, str, Any]] = []
    step = max(1, len(ids) // max(1, len(ids) // 100))
    for n, hubspot_id in enumerate(ids[::step]):
        key = "htmlTitle" if n % 2 == 0 else "name"
        value = f"A person's {key} {hubspot_id}"
        fake.person_edit(PORTAL, PAGE, hubspot_id, {key: value})
        made.append((hubspot_id, key, value))
    return made


async def prepare(url: str, base_url: str) -> None:
    async with pool_for(url, max_size=4) as pool:
        db = Database(pool)
        owner = await app_user_ensure(db, "bench@localhost", invited=False)
        token = TokenCipher(SecretStr(SECRET)).encrypt(SecretStr(TOKEN))
        await portal_store(db, PORTAL, "bench", owner, token, "UTC")
    async with pool_for(url, role=DbRole.WORKER, max_size=6) as pool:
        db = Database(pool)
        await start_fetch(db, PORTAL, [ContentType.HUBDB_TABLE, PAGE, ROW])
        settings = settings_for(url, base_url)
        await Runner(db, settings, kinds=[JobKind.FETCH], concurrency=3, burst=True).run()


async def bench(server_url: str, pages: int, rows: int, edits: int, tables: int) -> dict[str, Any]:
    spec = PortalSpec(portal_id=PORTAL, token=TOKEN, seed=7, site_pages=pages, landing_pages=0,
                      blog_posts=0, hubdb_tables=tables, rows_per_table=rows // tables,
                      archived_share=0.0)  # fmt: skip
    config = ServerConfig(latency_ms=20, ten_second_limit=LIMIT_PER_10S, daily_limit=None)
    async with scratch_database(server_url, prefix="smuves_bench_push") as url:
        with serve_in_subprocess([spec], config) as fake:
            log(f"fetching {pages:,} pages and {rows:,} rows")
            await prepare(url, fake.base_url)
            page_ids = sorted(t.hubspot_id for t in fake.ground_truth(PORTAL, PAGE))
            row_ids = sorted(t.hubspot_id for t in fake.ground_truth(PORTAL, ROW))
            cells = {h: {"values.title": f"Bench cell {h}"} for h in row_ids}
            by_page = page_edits(page_ids, edits - len(cells))
            async with pool_for(url, max_size=4) as pool:
                db = Database(pool)
                changesets = [
                    (await plant_changeset(db, PORTAL, PAGE, by_page)).id,
                    (await plant_changeset(db, PORTAL, ROW, cells)).id,
                ]
            made = people_before(fake, page_ids)
            fake.set_write_faults(
                (WriteFault(WriteFaultKind.EDIT_AFTER_READ, content_type=PAGE, object_share=0.01),)
            )
            before = fake.stats(PORTAL)
            log(f"pushing {len(by_page) + len(cells):,} items")
            async with (
                pool_for(url, max_size=2) as operator,
                pool_for(url, role=DbRole.WORKER, max_size=8) as pool,
            ):
                started = time.perf_counter()
                for changeset in changesets:  # as `smuves changeset push` starts them
                    await start_push(Database(operator), changeset)
                settings = settings_for(url, fake.base_url)
                runner = Runner(
                    Database(pool), settings, kinds=[JobKind.PUSH], concurrency=2, burst=True
                )
                await runner.run()
                wall = time.perf_counter() - started
            stats = fake.stats(PORTAL)
            lost = lost_human_edits(fake, PORTAL, PAGE, made)
            async with pool_for(url, max_size=2) as pool:
                counts = [await changeset_counts(Database(pool), c) for c in changesets]
    requests = stats.requests - before.requests
    limited = stats.status_429 - before.status_429
    admitted = requests - limited
    items = len(by_page) + len(cells)
    bound = admitted * 10 / LIMIT_PER_10S
    return {
        "items": items,
        "field_edits": sum(len(f) for f in by_page.values()) + len(cells),
        "requests": requests,
        "requests_429": limited,
        "requests_per_100_items": round(requests * 100 / items, 2),
        "wall_s": round(wall, 2),
        "bound_s": round(bound, 2),
        "wall_ratio_to_bound": round(wall / bound, 2) if bound else None,
        "applied": sum(c.get("applied", 0) for c in counts),
        "conflicts": sum(c.get("conflict", 0) for c in counts),
        "failed": sum(c.get("failed", 0) for c in counts),
        "held": sum(c.get("held", 0) for c in counts),
        "lost_human_edits": len(lost),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=None, help="a server to create scratch dbs on")
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--edits", type=int, default=10_000, help="field edits in all")
    parser.add_argument("--tables", type=int, default=1, help="HubDB tables the rows are in")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    async with scratch_server(args.database_url) as server_url:
        figures = await bench(server_url, args.pages, args.rows, args.edits, args.tables)
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:>24}  {value}")


if __name__ == "__main__":
    asyncio.run(main())
