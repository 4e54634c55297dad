#!/usr/bin/env python3
"""Benchmark a full sync, the ingest path alone, what content history costs, exports, and what a
re-sync writes and asks HubSpot for.

    .venv/bin/python scripts/bench_sync.py [--objects 50000] [--json] [--database-url URL]
        [--only sync|ingest|history|export|resync|incremental ...] [--repeat 5]
    .venv/bin/python scripts/bench_sync.py --resync [--resync-objects 5339] [--fillfactor N]
        [--objects 50000]

Sync: a fake portal of --objects objects over the five types (--mix: even or skewed; the fake
in a subprocess, 50 ms latency, 190 requests per rolling 10 s), fetched by two `smuves worker`
processes logged in as smuves_worker_login, as on a worker host (only
SMUVES_WORKER_DATABASE_URL; its password, when the environment's SMUVES_WORKER_DATABASE_URL
gives one, is set as `smuves db migrate` sets it). The wall time from the enqueue to the
settled run is set against the rate-limit bound: the requests HubSpot admitted (429s
excluded) at 190 per 10 s. Each worker's peak RSS is read from the kernel when it exits
(wait4). A worker that exits, or a run that does not move for two minutes, ends the
benchmark with the worker's exit code and the last lines of its output.

Ingest: synthetic pages of 100 objects (real fake-HubSpot page bodies, about 2.4 KB of JSON
each, with fresh ids) stored by `content_upsert_page`, one transaction per page on one
connection as one fetch job does, and on four connections at once (four jobs ingesting);
beside each, the bound: the same pages sent the same way with Postgres only parsing the
documents into jsonb (most of what storing them costs), and the floor: the same, the parsed
documents also written into a table with no key, index, trigger or policy, compressed as
content_items.data is (what writing the documents costs before anything of ours). The three
take turns every 2,000 objects (8,000 on four connections), so that on a busy machine a burst
of other work slows them alike; each ratio is that of the time two of them spent storing.
This is done in --repeat rounds (each with fresh ids, the sides taking turns at going first):
the rates and ratios are the medians of the rounds'. Once: a second pass over the first
round's site pages, every object unchanged (`ingest_unchanged_rows_written` says how many rows
it wrote: none), and the baseline of one INSERT per object.

History: the same pages stored into two scratch databases, one keeping content history
(content_versions, written by content_items' triggers) and one with those triggers disabled,
with a fetch job running as while a worker stores pages: a first sync of --history-rows
objects, an unchanged re-sync, and --history-rounds re-syncs in each of which another 10 % of
the documents changed (versions written). The two databases store each page in turn, and
only the time spent storing is counted, so both see the same load of a busy machine. Rows/s
of each, the median of the changed rounds, and what history costs there (at most 25 %);
storage from pg_total_relation_size (table, TOAST and indexes): content_items' bytes per
object, content_versions' bytes per object after the first sync (none: an object's first
version is its row until it changes), and its growth per version written by the changed rounds
(`history_version_rows_written` counts the rows: an object's first change writes two, its
first version moving out of its row, and the new one).

Export: 100,000 and 10,000 stored rows exported to CSV, each by `smuves export`'s code in a
child process (its export job logged in as smuves_worker_login) whose peak RSS is read when
it exits; rows/s is timed inside the child.

Re-sync (--resync, the same as --only resync): a fake portal of --resync-objects objects (no
latency, no rate limit, HubSpot's offset cursors) synced in full by an in-process worker,
then synced again three ways, each measured around the re-sync alone: nothing changed; 10 %
of the objects changed (`resync_10pct_…`, set against the objects that changed); and nothing
changed three times over while a repeatable-read transaction stays open on another
connection (`resync_open_txn_…`: vacuum can reclaim nothing meanwhile). Rows written are the
content rows whose xmin moved; WAL per object is the distance of `pg_current_wal_lsn()`
before and after, which counts whatever else the server wrote meanwhile (other databases
too), and, with pg_walinspect, only this database's records (`…_this_db`, and of those
the records touching content_items, `…_content_items`). --fillfactor sets content_items'
fillfactor in the scratch database first (to compare; the migration sets the product's).

Incremental (--resync runs it too, or --only incremental): a fake portal of --objects objects
(as the sync's, even mix; no latency or rate limit, offset cursors) synced in full, then
re-synced, each time every type, by an in-process worker: unchanged; after 1 % of the objects
changed, 0.1 % archived as HubSpot's API deletes them (into the archived listing, `updated` left
alone) and 0.02 % purged from the recycle bin, gone from every listing (`resync_1pct_…`: the
purges only counts find); after 10 % changed (`resync_10pct_…`); after 1 % purged from the live
listing, scattered (`resync_purge_…`: too many for count windows, so the passes' ids are listed).
Each prints HubSpot requests, wall time and how deletions were looked for (`…_deletions`: each
way's requests, summed over the types); the ratios are the requests against the full sync's,
and `resync_content_exact` says whether the stored objects were exactly what the fake serves
(documents, archived flags) after every one of them.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL, else
the embedded PostgreSQL in a temporary directory; every phase gets a scratch database, dropped
afterwards. With --json the last line is one JSON object: {"ratio_to_bound": …,
"worker_peak_rss_mb": …, "ingest_rows_per_s": …, "export_rows_per_s": …,
"export_peak_rss_mb_100k": …, "export_peak_rss_mb_10k": …, "resync_rows_written": …,
"resync_wal_bytes_per_object": …, "resync_unchanged_request_ratio": …,
"resync_1pct_request_ratio": …, "resync_10pct_request_ratio": …,
"resync_purge_request_ratio": …, "resync_content_exact": …, …}.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from pydantic import SecretStr
from rich.console import Console

from smuves_sync.cli.export import export_portal
from smuves_sync.content_fields import ContentRecord
from smuves_sync.db import Database, DbRole, Pool, pool_for
from smuves_sync.db.content import NewPages, content_upsert_page
from smuves_sync.db.fetch_reads import fetch_reads_of_run
from smuves_sync.db.portals import app_user_ensure, portal_store
from smuves_sync.hubspot.registry import DEFAULT_REGISTRY
from smuves_sync.models import ContentType, ExportFormat, Job, JobKind, RunStatus
from smuves_sync.orchestrator import start_fetch
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    Churn,
    FakeHubSpot,
    FakeHubSpotProcess,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
)
from smuves_sync.testing.history_bench import (
    fetch_job_running,
    history_off,
    plant_job,
    storage,
)
from smuves_sync.testing.ingest_baseline import (
    content_parse_only,
    content_store_bare,
    content_upsert_one_by_one,
    floor_table_create,
)
from smuves_sync.testing.resync_probe import (
    ResyncCost,
    ResyncProbe,
    content_items_fillfactor,
    content_items_size,
    content_items_updates,
    total,
)
from smuves_sync.testing.scratch import scratch_database, scratch_server
from smuves_sync.testing.worker_processes import (
    WorkerFailed,
    Workers,
    reap,
    start_worker,
    tail,
    worker_env,
    worker_login,
)
from smuves_sync.token_crypto import TokenCipher, new_secret_key
from smuves_sync.workers.follow import run_snapshot
from smuves_sync.workers.runner import Runner

PORTAL = 4711
TOKEN = "bench-private-app-token"
SECRET = new_secret_key()
LIMIT_PER_10S = 190
PAGE = 100
PHASES = ("sync", "ingest", "history", "export", "resync", "incremental")

# Stores one page of a type for a run, in a transaction of its own on a connection of the pool.
# A page store: (pool, type, lease, page, the storing job's guess that its pages are new).
PageStore = Callable[[Pool, ContentType, Job, Sequence[ContentRecord], NewPages], Awaitable[int]]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sync_portal(objects: int, mix: str = "even") -> PortalSpec:
    """A portal of exactly `objects` objects over the five types.

    even:   a quarter each of site pages, landing pages, blog posts and HubDB rows (5 tables);
    skewed: 40 % site pages, 10 % landing pages, 30 % posts, 20 % rows. One type's pages come
            one after another (each names the next), so a type much larger than the others
            ends the sync alone, at the pace of one request chain rather than the budget.
    """
    shares = (25, 25, 25) if mix == "even" else (40, 10, 30)
    site, landing, posts = (objects * share // 100 for share in shares)
    tables = 5
    rows_per_table = (objects - site - landing - posts - tables) // tables
    site += objects - (site + landing + posts + tables + tables * rows_per_table)
    return PortalSpec(
        portal_id=PORTAL,
        token=TOKEN,
        seed=42,
        site_pages=site,
        landing_pages=landing,
        blog_posts=posts,
        hubdb_tables=tables,
        rows_per_table=rows_per_table,
        archived_share=0.05,
    )


async def add_bench_portal(url: str) -> None:
    """The bench portal, stored as `smuves portal add` would once HubSpot (here: the fake,
    which may not be running yet) has vouched for its token."""
    async with pool_for(url, max_size=2) as pool:
        db = Database(pool)
        owner = await app_user_ensure(db, "bench@localhost", invited=False)
        token = TokenCipher(SecretStr(SECRET)).encrypt(SecretStr(TOKEN))
        await portal_store(db, PORTAL, "bench", owner, token, "UTC")


# -- sync ----------------------------------------------------------------------------------


async def bench_sync(
    server_url: str, objects: int, workers: int, logs: Path, mix: str
) -> dict[str, Any]:
    """Two worker processes, logged in as smuves_worker_login, fetch the portal; wall time,
    bound and worker RSS. A worker that exits, or a run that stops moving for two minutes,
    ends the benchmark with the worker's exit code and its last lines."""
    spec = sync_portal(objects, mix)
    config = ServerConfig(latency_ms=50, ten_second_limit=LIMIT_PER_10S, daily_limit=None)
    async with scratch_database(server_url, prefix="smuves_bench_sync") as url:
        await add_bench_portal(url)
        login = await worker_login(url)
        with serve_in_subprocess([spec], config) as fake:
            env = worker_env(
                login,
                SMUVES_HUBSPOT_BASE_URL=fake.base_url,
                SMUVES_SECRET_KEY=SECRET,
                SMUVES_POLL_INTERVAL_SECONDS="0.5",
            )
            procs = Workers(
                [
                    start_worker(
                        env, logs / f"worker{n}.log", "--kinds", "fetch", "--concurrency", "3"
                    )
                    for n in range(workers)
                ]
            )
            try:
                await procs.ready()  # both are up (and idle) before the run is enqueued
                async with pool_for(url, role=DbRole.WORKER, max_size=2) as pool:
                    db = Database(pool)
                    started_at = time.perf_counter()
                    started = await start_fetch(db, PORTAL)
                    while True:
                        snapshot = await run_snapshot(db, PORTAL, started.run.id)
                        if snapshot.run.status.is_terminal:
                            break
                        procs.check(progress=[(j.status, j.processed) for j in snapshot.jobs])
                        await asyncio.sleep(0.1)
                    wall = time.perf_counter() - started_at
            finally:
                reaped = await procs.stop()
            stats = fake.stats(PORTAL)
    if snapshot.run.status is not RunStatus.COMPLETED or any(
        j.processed != j.total for j in snapshot.jobs
    ):
        raise SystemExit(f"the sync did not complete cleanly: {snapshot}")
    admitted = stats.requests - stats.status_429
    bound = admitted * 10 / LIMIT_PER_10S
    return {
        "sync_mix": mix,
        "sync_objects": sum(j.processed for j in snapshot.jobs),
        "sync_wall_s": round(wall, 2),
        "sync_requests": stats.requests,
        "sync_429": stats.status_429,
        "rate_limit_bound_s": round(bound, 2),
        "ratio_to_bound": round(wall / bound, 3),
        "worker_peak_rss_mb": round(max(r.peak_rss_mb for r in reaped), 1),
    }


# -- ingest --------------------------------------------------------------------------------


def templates(count: int = 500) -> list[ContentRecord]:
    """Real site-page bodies from the fake, read by the registry like the client reads them."""
    fake = FakeHubSpot([PortalSpec(portal_id=1, token="t", seed=7, site_pages=count)])
    spec = DEFAULT_REGISTRY.get(ContentType.SITE_PAGE)
    return [
        spec.read(item.data)
        for item in fake.ground_truth(1, ContentType.SITE_PAGE, archived=False, with_data=True)
        if item.data is not None
    ]


def pages(base: list[ContentRecord], rows: int, first_id: int = 1) -> Iterator[list[ContentRecord]]:
    """`rows` records with ids from `first_id`, a page at a time (built lazily: memory stays
    flat). An id's body is chosen by the id alone, so the same id is the same object however
    the ids are cut into calls (the ingest rounds store theirs a chunk at a time, the pass over
    unchanged objects all at once)."""
    for start in range(first_id, first_id + rows, PAGE):
        page = []
        for number in range(start, min(start + PAGE, first_id + rows)):
            template = base[number % len(base)]
            object_id = str(number)
            page.append(
                dataclasses.replace(
                    template, hubspot_id=object_id, raw={**template.raw, "id": object_id}
                )
            )
        yield page


def edited_pages(base: list[ContentRecord], rows: int, edit: int) -> Iterator[list[ContentRecord]]:
    """The objects of `pages` as after `edit` rounds of edits (1 to 9): round k edited the
    tenth of the objects whose id ends in k (a new meta description: a new document), so
    round `edit` changes exactly that tenth and leaves the earlier rounds' edits as they were.
    """
    for page in pages(base, rows):
        edited = []
        for record in page:
            digit = int(record.hubspot_id) % 10
            if 1 <= digit <= edit:
                raw = {**record.raw, "metaDescription": f"Edited in round {digit}."}
                record = dataclasses.replace(record, raw=raw)
            edited.append(record)
        yield edited


async def upsert_page(
    pool: Pool,
    content_type: ContentType,
    lease: Job,
    page: Sequence[ContentRecord],
    new_pages: NewPages,
) -> int:
    """The fetch handler's page store, in a worker transaction under the lease of a job of
    the portal (stored as seen by the job's run), a page of new objects inserted as it is
    while `new_pages` guesses so, as a fetch job's are."""
    async with Database(pool).for_job(lease, async_commit=True) as scoped:
        return await content_upsert_page(
            scoped, PORTAL, content_type, lease.run_id, page, new_pages=new_pages
        )


async def one_by_one(
    pool: Pool, content_type: ContentType, lease: Job, page: Sequence[ContentRecord], _: NewPages
) -> int:
    """The baseline: one INSERT per object."""
    return await content_upsert_one_by_one(pool, lease, content_type, lease.run_id, page)


async def parse_only(
    pool: Pool, content_type: ContentType, lease: Job, page: Sequence[ContentRecord], _: NewPages
) -> int:
    """The bound: the page sent as `upsert_page` sends it, Postgres only parsing it."""
    return await content_parse_only(pool, lease, page)


async def bare_table(
    pool: Pool, content_type: ContentType, lease: Job, page: Sequence[ContentRecord], _: NewPages
) -> int:
    """The floor: the page sent as `upsert_page` sends it, its documents written into a table
    with no key, index, trigger or policy."""
    return await content_store_bare(pool, lease, page)


async def ingest(
    pool: Pool,
    lease: Job,
    content_type: ContentType,
    rows: int,
    *,
    writers: int = 1,
    store: PageStore = upsert_page,
    first_id: int = 1,
) -> float:
    """Store `rows` objects (ids from `first_id`) a page per transaction, `writers` connections
    at once; rows/s.

    The pages are made by a task of their own, a page or so ahead of the writers, as the
    fetch handler's next page is fetched and parsed while the current one is stored. Each
    writer stores as one fetch job does (its own guess that its pages are new).
    """
    base = templates()
    ahead: asyncio.Queue[list[ContentRecord] | None] = asyncio.Queue(maxsize=writers)

    async def produce() -> None:
        for page in pages(base, rows, first_id):
            await ahead.put(page)
        for _ in range(writers):
            await ahead.put(None)

    async def writer() -> None:
        new_pages = NewPages()
        while (page := await ahead.get()) is not None:
            await store(pool, content_type, lease, page, new_pages)

    started = time.perf_counter()
    await asyncio.gather(produce(), *(writer() for _ in range(writers)))
    return rows / (time.perf_counter() - started)


async def alternating(
    pool: Pool, lease: Job, writers: int, rows: int, first_id: int, ours_first: bool
) -> dict[str, float]:
    """Our page store (fresh site pages on one connection, blog posts on more), the bound and
    the floor, each storing `rows` objects on `writers` connections, taking turns every 2,000
    objects a connection so that a burst of other work on the machine slows them alike; the
    rates (rows/s) of each, from the time each spent storing."""
    ours_type = ContentType.SITE_PAGE if writers == 1 else ContentType.BLOG_POST
    sides = [
        ("ours", partial(ingest, pool, lease, ours_type, writers=writers)),
        (
            "bound",
            partial(ingest, pool, lease, ContentType.SITE_PAGE, writers=writers, store=parse_only),
        ),
        (
            "floor",
            partial(ingest, pool, lease, ContentType.SITE_PAGE, writers=writers, store=bare_table),
        ),
    ]
    spent = dict.fromkeys((name for name, _ in sides), 0.0)
    chunk = 2_000 * writers
    for start in range(0, rows, chunk):
        size = min(chunk, rows - start)
        for name, side in sides if ours_first else sides[::-1]:
            spent[name] += size / await side(size, first_id=first_id + start)
    return {name: rows / seconds for name, seconds in spent.items()}


async def ingest_round(pool: Pool, lease: Job, rows: int, round_: int) -> dict[str, float]:
    """One round of the ingest rates against their bound and floor, on one connection and on
    four, with fresh ids; which side goes first alternates from round to round."""
    figures: dict[str, float] = {}
    for label, writers in (("one", 1), ("four", 4)):
        rates = await alternating(
            pool, lease, writers, rows, 1 + round_ * rows, ours_first=round_ % 2 == 0
        )
        bound = rates["bound"]
        figures |= {f"{name}_{label}": rate for name, rate in rates.items()}
        figures |= {
            f"ratio_{label}": rates["ours"] / bound,
            f"floor_ratio_{label}": rates["floor"] / bound,
            f"ours_to_floor_{label}": rates["ours"] / rates["floor"],
        }
    log(
        f"  round {round_ + 1}: one writer {figures['ours_one']:,.0f} rows/s, bound "
        f"{figures['bound_one']:,.0f} ({figures['ratio_one']:.2f}), floor "
        f"{figures['floor_one']:,.0f} ({figures['floor_ratio_one']:.2f}); four writers "
        f"{figures['ours_four']:,.0f}, bound {figures['bound_four']:,.0f} "
        f"({figures['ratio_four']:.2f}), floor {figures['floor_four']:,.0f} "
        f"({figures['floor_ratio_four']:.2f})"
    )
    return figures


async def bench_ingest(
    server_url: str, rows: int, baseline_rows: int, repeat: int
) -> dict[str, Any]:
    async with scratch_database(server_url, prefix="smuves_bench_ingest") as url:
        await add_bench_portal(url)
        await floor_table_create(url)
        lease = await plant_job(url, "bench_lease_job", {"portal_id": PORTAL})
        async with pool_for(url, role=DbRole.WORKER, max_size=4) as pool:
            rounds = [await ingest_round(pool, lease, rows, 0)]
            # the first round's site pages again, every object unchanged: none is written
            rewritten = 0

            async def counting(
                pool: Pool,
                content_type: ContentType,
                lease: Job,
                page: Sequence[ContentRecord],
                new_pages: NewPages,
            ) -> int:
                nonlocal rewritten
                written = await upsert_page(pool, content_type, lease, page, new_pages)
                rewritten += written
                return written

            unchanged = await ingest(pool, lease, ContentType.SITE_PAGE, rows, store=counting)
            for round_ in range(1, repeat):
                rounds.append(await ingest_round(pool, lease, rows, round_))
            baseline = await ingest(
                pool, lease, ContentType.LANDING_PAGE, baseline_rows, store=one_by_one
            )
    rate = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    return {
        "ingest_rows": rows,
        "ingest_repeat": repeat,
        "ingest_rows_per_s": round(rate["ours_one"]),
        "ingest_unchanged_rows_per_s": round(unchanged),
        "ingest_unchanged_rows_written": rewritten,
        "ingest_4_writers_rows_per_s": round(rate["ours_four"]),
        "ingest_baseline_one_by_one_rows_per_s": round(baseline),
        "ingest_bound_jsonb_parse_only_rows_per_s": round(rate["bound_one"]),
        "ingest_bound_jsonb_parse_only_4_writers_rows_per_s": round(rate["bound_four"]),
        "ingest_ratio_to_bound": round(rate["ratio_one"], 3),
        "ingest_4_writers_ratio_to_bound": round(rate["ratio_four"], 3),
        "ingest_floor_bare_table_rows_per_s": round(rate["floor_one"]),
        "ingest_floor_bare_table_4_writers_rows_per_s": round(rate["floor_four"]),
        "ingest_floor_ratio_to_bound": round(rate["floor_ratio_one"], 3),
        "ingest_floor_4_writers_ratio_to_bound": round(rate["floor_ratio_four"], 3),
        "ingest_ratio_to_floor": round(rate["ours_to_floor_one"], 3),
        "ingest_4_writers_ratio_to_floor": round(rate["ours_to_floor_four"], 3),
    }


# -- history -------------------------------------------------------------------------------


async def paired_ingest(
    pools: dict[str, Pool], leases: dict[str, Job], rows: int, edit: int | None
) -> dict[str, float]:
    """Store the same `rows` objects (as after `edit` rounds of edits) a page per transaction
    into each pool's database, page by page, taking turns at going first; rows/s of each,
    from the time spent storing only. Page by page, so that on a busy machine both see the
    same moments: two runs one after the other would each see a different load."""
    base = templates()
    spent = dict.fromkeys(pools, 0.0)
    labels = list(pools)
    new_pages = {label: NewPages() for label in pools}  # each pass one fetch job per database
    made = pages(base, rows) if edit is None else edited_pages(base, rows, edit)
    for number, page in enumerate(made):
        for label in labels if number % 2 == 0 else labels[::-1]:
            started = time.perf_counter()
            await upsert_page(
                pools[label], ContentType.SITE_PAGE, leases[label], page, new_pages[label]
            )
            spent[label] += time.perf_counter() - started
    return {label: rows / seconds for label, seconds in spent.items()}


async def bench_history(server_url: str, rows: int, rounds: int) -> dict[str, Any]:
    """Ingest with content history and without it; rates, the cost, and storage."""
    kept, off = "history", "no_history"
    async with (
        scratch_database(server_url, prefix="smuves_bench_history") as kept_url,
        scratch_database(server_url, prefix="smuves_bench_nohistory") as off_url,
    ):
        await history_off(off_url)
        urls = {kept: kept_url, off: off_url}
        leases = {}
        for label, url in urls.items():
            await add_bench_portal(url)
            leases[label] = await fetch_job_running(url, PORTAL, ContentType.SITE_PAGE)
        async with (
            pool_for(kept_url, role=DbRole.WORKER, max_size=1) as kept_pool,
            pool_for(off_url, role=DbRole.WORKER, max_size=1) as off_pool,
        ):
            pools = {kept: kept_pool, off: off_pool}
            first = await paired_ingest(pools, leases, rows, None)
            after_first = await storage(kept_url)
            unchanged = await paired_ingest(pools, leases, rows, None)
            changed: dict[str, list[float]] = {kept: [], off: []}
            for round_ in range(1, rounds + 1):
                found = await paired_ingest(pools, leases, rows, round_)
                for label, rate in found.items():
                    changed[label].append(rate)
                log(
                    f"  10 % changed, round {round_}: "
                    + ", ".join(f"{label} {rate:,.0f} rows/s" for label, rate in found.items())
                )
            after = await storage(kept_url)
    with_history, without = statistics.median(changed[kept]), statistics.median(changed[off])
    written = after.versions - after_first.versions
    return {
        "history_objects": rows,
        "history_first_sync_rows_per_s": round(first[kept]),
        "history_first_sync_without_history_rows_per_s": round(first[off]),
        "history_unchanged_resync_rows_per_s": round(unchanged[kept]),
        "history_unchanged_resync_without_history_rows_per_s": round(unchanged[off]),
        "history_changed_10pct_resync_rows_per_s": round(with_history),
        "history_changed_10pct_resync_without_history_rows_per_s": round(without),
        "history_changed_10pct_cost_pct": round((1 - with_history / without) * 100, 1),
        "history_versions_written": written,
        # a first change also moves the object's first version out of its row
        "history_version_rows_written": after.version_rows - after_first.version_rows,
        "history_documents_kept": after.documents,
        "history_content_items_bytes_per_object": round(after_first.items_bytes / rows),
        "history_versions_bytes_per_object": round(after_first.versions_bytes / rows),
        "history_versions_bytes_per_version": round(
            (after.versions_bytes - after_first.versions_bytes) / max(written, 1)
        ),
    }


# -- export --------------------------------------------------------------------------------


def export_child(url: str, content_type: str, out: Path) -> None:
    """In the child: export like `smuves export` does; print rows and seconds as JSON."""
    settings = Settings(database_url=url, secret_key=SecretStr(SECRET), poll_interval_seconds=0.5)
    said = io.StringIO()
    console = Console(file=said)
    started = time.perf_counter()
    code, export = asyncio.run(
        export_portal(
            settings, PORTAL, content_type, ExportFormat.CSV, out=out, wait=True, console=console
        )
    )
    seconds = time.perf_counter() - started
    if export is None or export.row_count is None or int(code) != 0:
        raise SystemExit(f"export failed: {said.getvalue()}")
    print(json.dumps({"rows": export.row_count, "bytes": export.bytes, "seconds": seconds}))


def run_export_child(url: str, login: str, content_type: ContentType, out: Path) -> dict[str, Any]:
    """`export_child` in a process of its own, whose export job logs in as `login`."""
    errors = out.with_suffix(".stderr")
    with tempfile.TemporaryFile() as sink, errors.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, __file__, "--export-child", url, str(content_type), str(out)],
            env=worker_env(login),
            stdout=sink,
            stderr=stderr,
        )
        reaped = reap(child)
        sink.seek(0)
        printed = sink.read().decode().strip().splitlines()
    if reaped.code != 0 or not printed:
        raise SystemExit(
            f"the export of {content_type} exited with code {reaped.code}; the last lines of "
            f"its stderr:\n{tail(errors)}"
        )
    result: dict[str, Any] = json.loads(printed[-1])
    result["peak_rss_mb"] = reaped.peak_rss_mb
    return result


async def bench_export(server_url: str, big: int, small: int, workdir: Path) -> dict[str, Any]:
    async with scratch_database(server_url, prefix="smuves_bench_export") as url:
        await add_bench_portal(url)
        login = await worker_login(url)
        lease = await plant_job(url, "bench_lease_job", {"portal_id": PORTAL})
        async with pool_for(url, role=DbRole.WORKER, max_size=2) as pool:
            await ingest(pool, lease, ContentType.SITE_PAGE, big)
            await ingest(pool, lease, ContentType.LANDING_PAGE, small)
        results = {}
        for label, content_type in (
            ("small", ContentType.LANDING_PAGE),
            ("big", ContentType.SITE_PAGE),
        ):
            results[label] = await asyncio.to_thread(
                run_export_child, url, login, content_type, workdir / f"{content_type}.csv"
            )
    for label, expected in (("big", big), ("small", small)):
        if results[label]["rows"] != expected:
            raise SystemExit(f"export of {expected} rows wrote {results[label]['rows']}")
    return {
        "export_rows": big,
        "export_rows_per_s": round(big / results["big"]["seconds"]),
        "export_bytes": results["big"]["bytes"],
        "export_peak_rss_mb_100k": round(results["big"]["peak_rss_mb"], 1),
        "export_peak_rss_mb_10k": round(results["small"]["peak_rss_mb"], 1),
        "export_small_rows_per_s": round(small / results["small"]["seconds"]),
    }


# -- re-sync -------------------------------------------------------------------------------


async def fetch_all(url: str, base_url: str, *, full: bool = False) -> int:
    """A fetch of every type of the bench portal, worked in this process until it settles;
    returns its run's id."""
    settings = Settings(
        database_url=url,
        hubspot_base_url=base_url,
        secret_key=SecretStr(SECRET),
        poll_interval_seconds=0.5,
    )
    # The pool closes (its sessions end) before the caller reads the table's statistics.
    async with pool_for(url, role=DbRole.WORKER, max_size=6) as pool:
        db = Database(pool)
        started = await start_fetch(db, PORTAL, full=full)
        await Runner(db, settings, kinds=[JobKind.FETCH], concurrency=3, burst=True).run()
        snapshot = await run_snapshot(db, PORTAL, started.run.id)
    if snapshot.run.status is not RunStatus.COMPLETED:
        raise SystemExit(f"the re-sync did not complete: {snapshot}")
    return started.run.id


def documents(fake: FakeHubSpotProcess) -> dict[tuple[str, str], Any]:
    """What the fake serves: (type, id) -> (the object, archived)."""
    return {
        (str(t), item.hubspot_id): (item.data, item.archived)
        for t in ContentType
        for item in fake.ground_truth(PORTAL, t, with_data=True)
    }


def cost_figures(prefix: str, cost: ResyncCost, objects: int) -> dict[str, Any]:
    def per_object(value: int | None) -> float | None:
        return None if value is None else round(value / objects, 1)

    return {
        f"{prefix}_rows_written": cost.rows_written,
        f"{prefix}_wal_bytes_per_object": per_object(cost.wal_bytes),
        f"{prefix}_wal_bytes_per_object_this_db": per_object(cost.wal_bytes_this_database),
        f"{prefix}_wal_bytes_per_object_this_db_full_page_images": per_object(
            cost.wal_bytes_full_page_images
        ),
        f"{prefix}_wal_bytes_per_object_content_items": per_object(cost.wal_bytes_content_items),
        f"{prefix}_content_items_bytes_before": cost.size_before,
        f"{prefix}_content_items_bytes_after": cost.size_after,
    }


async def bench_resync(server_url: str, objects: int, fillfactor: int | None) -> dict[str, Any]:
    """Full sync, then re-syncs: unchanged, 10 % changed, unchanged with a snapshot held."""
    spec = sync_portal(objects)
    config = ServerConfig(ten_second_limit=None, daily_limit=None, cursors="offset")
    figures: dict[str, Any] = {"resync_objects": objects}
    async with scratch_database(server_url, prefix="smuves_bench_resync") as url:
        await add_bench_portal(url)
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        try:
            if fillfactor is not None:
                await conn.execute(
                    sql.SQL("ALTER TABLE public.content_items SET (fillfactor = {})").format(
                        sql.Literal(fillfactor)
                    )
                )
            figures["resync_fillfactor"] = await content_items_fillfactor(conn)
            with serve_in_subprocess([spec], config) as fake:
                log("resync: the full sync")
                await fetch_all(url, fake.base_url)

                log("resync: unchanged")
                probe = await ResyncProbe.start(conn, PORTAL)
                await fetch_all(url, fake.base_url)
                figures.update(cost_figures("resync", await probe.finish(), objects))

                log("resync: after 10 % changed")
                held = documents(fake)
                fake.advance(PORTAL, Churn(changed=0.1, deleted=0.0, added=0.0, archived=0.0))
                now = documents(fake)
                changed = sum(1 for key, value in now.items() if held.get(key) != value)
                updates = await content_items_updates(conn)
                probe = await ResyncProbe.start(conn, PORTAL)
                await fetch_all(url, fake.base_url)
                cost = await probe.finish()
                after = await content_items_updates(conn)
                figures.update(cost_figures("resync_10pct", cost, objects))
                hot = after["hot_updates"] - updates["hot_updates"]
                updated = after["updates"] - updates["updates"]
                figures.update(
                    {
                        "resync_10pct_objects_changed": changed,
                        "resync_10pct_written_per_changed": round(cost.rows_written / changed, 3),
                        "resync_10pct_hot_update_share": round(hot / updated, 3)
                        if updated
                        else None,
                    }
                )

                log("resync: unchanged three times, a repeatable-read transaction open")
                async with await psycopg.AsyncConnection.connect(url) as reader:
                    await reader.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
                    async with reader.transaction():
                        await reader.execute("SELECT count(*) FROM public.content_items")
                        costs = []
                        for _ in range(3):  # one by one: pg_walinspect reads recent WAL best
                            probe = await ResyncProbe.start(conn, PORTAL)
                            await fetch_all(url, fake.base_url)
                            costs.append(await probe.finish())
                        cost = total(costs)
                figures.update(cost_figures("resync_open_txn", cost, 3 * objects))
                figures["resync_open_txn_growth_bytes"] = (
                    await content_items_size(conn) - cost.size_before
                )
        finally:
            await conn.close()
    return figures


async def stored_documents(url: str) -> dict[tuple[str, str], Any]:
    """What the database holds as present: (type, id) -> (the object, archived)."""
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(
            "SELECT content_type::text, hubspot_id, data, archived FROM public.content_items"
            " WHERE portal_id = %s AND deleted_at IS NULL",
            (PORTAL,),
        )
        return {(t, i): (data, archived) for t, i, data, archived in await cur.fetchall()}


async def timed_fetch(url: str, fake: FakeHubSpotProcess, full: bool = False) -> dict[str, Any]:
    """One fetch of every type: its requests, wall time, how it looked for deletions (each way's
    requests, summed over the types) and whether the store is exact."""
    fake.reset_stats()
    started = time.perf_counter()
    run_id = await fetch_all(url, fake.base_url, full=full)
    wall = time.perf_counter() - started
    exact = await stored_documents(url) == documents(fake)
    async with pool_for(url, max_size=1) as pool:
        reads = await fetch_reads_of_run(Database(pool), run_id)
    deletions: dict[str, int] = {}
    for read in reads:
        for way, spent in read.deletions.items():
            deletions[way] = deletions.get(way, 0) + spent
    stats = fake.stats(PORTAL)
    return {
        "requests": stats.requests,
        "wall_s": round(wall, 2),
        "exact": exact,
        "deletions": deletions,
        "by_type": stats.by_content_type,
    }


async def bench_incremental(server_url: str, objects: int) -> dict[str, Any]:
    """Full sync, then incremental re-syncs: unchanged; 1 % changed, 0.1 % archived (as
    HubSpot's API deletes: into the archived listing, `updated` left alone) and 0.02 % purged
    (emptied from the recycle bin: gone from every listing); 10 % changed; 1 % purged from the
    live listing, scattered (the counts send the read to its ids listing)."""
    spec = sync_portal(objects)
    config = ServerConfig(ten_second_limit=None, daily_limit=None, cursors="offset")
    steps = {
        "resync_1pct": Churn(changed=0.01, deleted=0.0, added=0.0, archived=0.001, purged=0.0002),
        "resync_10pct": Churn(changed=0.1, deleted=0.0, added=0.0, archived=0.0),
        "resync_purge": Churn(changed=0.0, deleted=0.01, added=0.0, archived=0.0),
    }
    figures: dict[str, Any] = {}
    async with scratch_database(server_url, prefix="smuves_bench_incr") as url:
        await add_bench_portal(url)
        with serve_in_subprocess([spec], config) as fake:
            log("incremental: the full sync")
            full = await timed_fetch(url, fake)
            log(f"  {full}")
            log("incremental: unchanged")
            unchanged = await timed_fetch(url, fake)
            log(f"  {unchanged}")
            results = {"resync_full": full, "resync_unchanged": unchanged}
            for name, churn in steps.items():
                fake.advance(PORTAL, churn)
                log(f"incremental: {name}")
                results[name] = await timed_fetch(url, fake)
                log(f"  {results[name]}")
    for name, result in results.items():
        figures[f"{name}_requests"] = result["requests"]
        figures[f"{name}_wall_s"] = result["wall_s"]
        if name != "resync_full":
            ratio = result["requests"] / full["requests"]
            figures[f"{name}_request_ratio"] = round(ratio, 4)
        figures[f"{name}_deletions"] = result["deletions"]
    figures["resync_content_exact"] = all(r["exact"] for r in results.values())
    return figures


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    if args.resync:
        phases = {*(args.only or ()), "resync", "incremental"}
    else:  # the re-sync phases run when asked for
        asked = args.only or (phase for phase in PHASES if phase not in ("resync", "incremental"))
        phases = set(asked)
    phases -= {"sync"} if args.skip_sync else set()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="smuves-bench-") as tmp:
        workdir = Path(tmp)
        async with scratch_server(
            args.database_url or os.environ.get("SMUVES_DATABASE_URL")
        ) as url:
            if "sync" in phases:
                log(f"sync: {args.objects:,} objects, 50 ms, {LIMIT_PER_10S}/10 s, 2 workers")
                figures.update(await bench_sync(url, args.objects, 2, workdir, args.mix))
                log(f"  {figures}")
            if "ingest" in phases:
                log(f"ingest: {args.ingest_rows:,} rows, {args.repeat} rounds")
                figures.update(
                    await bench_ingest(url, args.ingest_rows, args.baseline_rows, args.repeat)
                )
            if "history" in phases:
                log(f"history: {args.history_rows:,} rows, {args.history_rounds} rounds")
                figures.update(await bench_history(url, args.history_rows, args.history_rounds))
            if "export" in phases:
                log(f"export: {args.export_rows:,} and {args.export_rows // 10:,} rows")
                figures.update(
                    await bench_export(url, args.export_rows, args.export_rows // 10, workdir)
                )
            if "resync" in phases:
                log(f"resync: {args.resync_objects:,} objects")
                figures.update(await bench_resync(url, args.resync_objects, args.fillfactor))
            if "incremental" in phases:
                log(f"incremental: {args.objects:,} objects")
                figures.update(await bench_incremental(url, args.objects))
    return figures


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--export-child":
        export_child(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument(
        "--mix", choices=("even", "skewed"), default="even", help="the sync portal's types"
    )
    parser.add_argument("--ingest-rows", type=int, default=50_000)
    parser.add_argument("--baseline-rows", type=int, default=5_000)
    parser.add_argument(
        "--repeat", type=int, default=5, help="rounds of the ingest rates and their bounds"
    )
    parser.add_argument("--history-rows", type=int, default=50_000)
    parser.add_argument(
        "--history-rounds",
        type=int,
        choices=range(1, 10),
        default=3,
        help="re-syncs with 10 %% changed, each",
    )
    parser.add_argument("--export-rows", type=int, default=100_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--skip-sync", action="store_true", help="every phase but the sync")
    parser.add_argument(
        "--only", action="append", choices=PHASES, help="run only this phase (repeatable)"
    )
    parser.add_argument(
        "--resync", action="store_true", help="measure what re-syncs write (--only resync)"
    )
    parser.add_argument("--resync-objects", type=int, default=5339)
    parser.add_argument(
        "--fillfactor", type=int, default=None, help="content_items' fillfactor for --resync"
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    args = parser.parse_args()
    try:
        figures = asyncio.run(main_async(args))
    except WorkerFailed as failed:
        raise SystemExit(f"bench_sync: {failed}") from None
    for key, value in figures.items():
        print(f"{key:40} {value}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
