#!/usr/bin/env python3
"""Benchmark a fleet: many portals on a few workers, a wave of schedules, a person's sync.

    .venv/bin/python scripts/bench_fleet.py [--portals 200] [--objects 1000] [--workers 2]
        [--concurrency 8] [--hosts 1] [--compare-portals 50] [--interactive-after 10] [--json]

The fake HubSpot (a subprocess, --latency-ms per answer) serves --portals portals of about
--objects objects each, of every type, each portal with its own token and its own 10-second
limit (--ten-second-limit). Each portal has its own owner and a nightly schedule of every type.
--workers `smuves worker --kinds fetch` processes (--concurrency slots each) start; once they
are idle every schedule is made due at the same moment (the wave), and --interactive-after
seconds later a person starts a fetch of a small portal (no schedule; the API's priority).
With --hosts H the worker processes are split into H groups, each its own process group with
its own SMUVES_WORKER_ID (host0, host1, ...), as if on H machines: they share nothing but the
database, and `jobs_by_host` counts the jobs each host claimed.

Printed (with --json, one JSON object last):
  objects_per_s                    objects stored / (last scheduled run settled - wave start)
  interactive_first_progress_s     the person's fetch: enqueue -> its first stored object
  portal_finish_spread             p95 / p50 of the scheduled portals' finish times (from the
                                   wave start; also _p50_s and _p95_s)
  cpu_s_per_1k_objects_workers     the worker processes' user+system CPU (wait4), per 1,000
                                   objects stored, start-up included
  cpu_s_per_1k_objects_postgres    the CPU of this database's server processes (the workers'
                                   connections, from /proc, sampled every second; Postgres's
                                   background processes are not counted), per 1,000 objects
  worker_peak_rss_mb               the largest worker's peak RSS (wait4)
  share_429                        HubSpot answers that were 429, of all requests
  bytes_per_object                 content_items with TOAST and indexes, per stored object
  jobs_by_host                     jobs claimed by each host (SMUVES_WORKER_ID), from locked_by
With --compare-portals M (default --portals / 4; 0: off) a fleet of M portals runs first, the
same way, and `worker_rss_ratio` is the peak RSS at --portals over the peak RSS at M.

The workers log in as smuves_worker_login (`smuves_sync.testing.worker_processes`), as on a
worker host; one that exits, or a fleet HubSpot hears nothing from for two minutes, ends the
benchmark with the worker's exit code and the last lines of its output.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL, else
the embedded PostgreSQL in a temporary directory; each fleet gets a scratch database, dropped
afterwards. Postgres must run on this machine for its CPU to be read (else that figure is
null).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from psycopg.rows import dict_row
from pydantic import SecretStr

from smuves_sync.db import Database, pool_for
from smuves_sync.db.portals import app_user_ensure, portal_store
from smuves_sync.db.schedules import schedule_add
from smuves_sync.models import ContentType, JobPriority
from smuves_sync.orchestrator import start_fetch
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpotProcess,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
)
from smuves_sync.testing.queries import testing_queries
from smuves_sync.testing.scratch import scratch_database, scratch_server
from smuves_sync.testing.worker_processes import (
    Reaped,
    Worker,
    WorkerFailed,
    Workers,
    start_worker,
    worker_env,
    worker_login,
)
from smuves_sync.token_crypto import TokenCipher, new_secret_key

SECRET = new_secret_key()
FIRST_PORTAL = 5_000_001
TICKS = os.sysconf("SC_CLK_TCK")
# Of every 1,000 objects of a portal: pages, posts, HubDB, the blog's other objects, redirects.
MIX = {
    "site_pages": 300,
    "landing_pages": 100,
    "blog_posts": 300,
    "blog_authors": 40,
    "blog_tags": 60,
    "url_redirects": 60,
    "blogs": 4,
}
HUBDB_ROWS = 130  # in two tables


@dataclass(frozen=True)
class Fleet:
    """One fleet's shape."""

    portals: int
    objects: int
    workers: int
    concurrency: int
    interactive_after: float
    latency_ms: float
    ten_second_limit: int
    hosts: int = 1


def portal_spec(portal_id: int, objects: int) -> PortalSpec:
    """A portal of about `objects` objects of every type."""
    scale = objects / 1000

    def count(name: str) -> int:
        return max(1, round(MIX[name] * scale))

    rows = max(1, round(HUBDB_ROWS * scale / 2))
    return PortalSpec(
        portal_id,
        f"token-{portal_id}",
        seed=portal_id,
        hubdb_tables=2,
        rows_per_table=rows,
        site_pages=count("site_pages"),
        landing_pages=count("landing_pages"),
        blog_posts=count("blog_posts"),
        blog_authors=count("blog_authors"),
        blog_tags=count("blog_tags"),
        url_redirects=count("url_redirects"),
        blogs=count("blogs"),
    )


async def sql(url: str, name: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of a named query of smuves_sync/testing/sql (login role, its own connection)."""
    async with pool_for(url, max_size=1) as pool, pool.connection() as conn:
        cursor = conn.cursor(row_factory=dict_row)
        await cursor.execute(testing_queries()[name], params)
        return await cursor.fetchall() if cursor.description else []


async def plant(url: str, specs: Sequence[PortalSpec], scheduled: int) -> None:
    """The portals, each with its owner and token; the first `scheduled` get a nightly
    schedule of every type, not due yet."""
    cipher = TokenCipher(SecretStr(SECRET))
    types = tuple(ContentType)
    async with pool_for(url, max_size=2) as pool:
        db = Database(pool)
        for index, spec in enumerate(specs):
            owner = await app_user_ensure(db, f"owner{spec.portal_id}@bench", invited=False)
            token = cipher.encrypt(SecretStr(spec.token))
            await portal_store(db, spec.portal_id, f"portal {spec.portal_id}", owner, token, "UTC")
            if index < scheduled:
                later = datetime.now(UTC) + timedelta(days=1)  # the wave makes them due
                await schedule_add(db, spec.portal_id, "0 3 * * *", types, next_run_at=later)


def start_workers(login: str, base_url: str, fleet: Fleet, logs: Path) -> Workers:
    """`smuves worker` processes logged in as `login` (smuves_worker_login), one log each, in
    `fleet.hosts` process groups (hosts) of their own SMUVES_WORKER_ID."""
    env = worker_env(
        login,
        SMUVES_HUBSPOT_BASE_URL=base_url,
        SMUVES_SECRET_KEY=SECRET,
        SMUVES_POLL_INTERVAL_SECONDS="0.5",
    )
    args = ("--kinds", "fetch", "--concurrency", str(fleet.concurrency))
    workers: list[Worker] = []
    groups: dict[int, int] = {}  # host -> its process group (its first worker's pid)
    for n in range(fleet.workers):
        host = n % fleet.hosts
        worker = start_worker(
            {**env, "SMUVES_WORKER_ID": f"host{host}"},
            logs / f"worker{n}.log",
            *args,
            process_group=groups.get(host, 0),
        )
        groups.setdefault(host, worker.process.pid)
        workers.append(worker)
    return Workers(workers)


def proc_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` so far (None: gone or not visible)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


class BackendCpu:
    """The CPU of the database's server processes, sampled: the last figure seen per pid."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}

    async def sample(self, url: str) -> None:
        """Read the CPU of every process connected to the database now."""
        for row in await sql(url, "fleet_backends"):
            cpu = proc_cpu_s(row["pid"])
            if cpu is not None:
                self.seen[row["pid"]] = max(cpu, self.seen.get(row["pid"], 0.0))

    def total(self) -> float | None:
        """The CPU seen, or None when no server process was visible (a remote Postgres)."""
        return sum(self.seen.values()) if self.seen else None


async def first_progress(url: str, portal_id: int, enqueued: float) -> float:
    """Seconds from `enqueued` until the portal's first object is stored."""
    while not (await sql(url, "fleet_stored_of_portal", portal_id=portal_id))[0]["n"]:
        await asyncio.sleep(0.05)
    return time.perf_counter() - enqueued


async def interactive(url: str, portal_id: int, after: float) -> float:
    """After `after` seconds, a person's fetch of `portal_id`; its first progress (s)."""
    await asyncio.sleep(after)
    async with pool_for(url, max_size=2) as pool:
        enqueued = time.perf_counter()
        await start_fetch(Database(pool), portal_id, priority=JobPriority.INTERACTIVE)
    return await first_progress(url, portal_id, enqueued)


async def wait_settled(
    url: str, runs: int, cpu: BackendCpu, workers: Workers, fake: FakeHubSpotProcess
) -> list[dict[str, Any]]:
    """The fetch runs once `runs` of them have settled, sampling the server's CPU meanwhile;
    `WorkerFailed` when a worker exits or HubSpot hears nothing more for a long while."""
    while True:
        await cpu.sample(url)
        rows = await sql(url, "fleet_fetch_runs")
        if sum(r["status"] not in ("pending", "running") for r in rows) >= runs:
            return rows
        requests = sum(s.requests for s in fake.all_stats().values())
        workers.check(progress=(requests, [r["status"] for r in rows]))
        await asyncio.sleep(1.0)


async def run_fleet(server_url: str, fleet: Fleet, logs: Path) -> dict[str, Any]:
    """One fleet, measured."""
    specs = [portal_spec(FIRST_PORTAL + n, fleet.objects) for n in range(fleet.portals)]
    small = portal_spec(FIRST_PORTAL + fleet.portals, max(fleet.objects // 10, 20))
    config = ServerConfig(
        latency_ms=fleet.latency_ms, ten_second_limit=fleet.ten_second_limit, daily_limit=None
    )
    async with scratch_database(server_url, prefix="smuves_bench_fleet") as url:
        await plant(url, [*specs, small], scheduled=fleet.portals)
        login = await worker_login(url)
        with serve_in_subprocess([*specs, small], config) as fake:
            workers = start_workers(login, fake.base_url, fleet, logs)
            cpu = BackendCpu()
            person: asyncio.Task[float] | None = None
            try:
                await workers.ready()
                [wave] = await sql(url, "fleet_wave_start")
                started = time.perf_counter()
                person = asyncio.create_task(
                    interactive(url, small.portal_id, fleet.interactive_after)
                )
                runs = await wait_settled(url, fleet.portals + 1, cpu, workers, fake)
                elapsed = time.perf_counter() - started
                first = await person
                await cpu.sample(url)
                [storage] = await sql(url, "fleet_storage")
                hosts = await sql(url, "fleet_jobs_by_host")
            finally:
                if person is not None:
                    person.cancel()
                reaped = await workers.stop()
            stats = fake.all_stats()
    finish = sorted(
        (r["finished_at"] - wave["started_at"]).total_seconds()
        for r in runs
        if r["portal_id"] != small.portal_id
    )
    figures = summary(fleet, finish, elapsed, first, reaped, cpu, storage, stats)
    figures["jobs_by_host"] = {row["host"]: row["jobs"] for row in hosts}
    return figures


def summary(
    fleet: Fleet,
    finish: list[float],
    elapsed: float,
    first: float,
    reaped: list[Reaped],
    cpu: BackendCpu,
    storage: dict[str, Any],
    stats: dict[int, Any],
) -> dict[str, Any]:
    """The figures of one fleet."""
    objects = int(storage["objects"])
    per_1k = 1000 / objects if objects else 0.0
    p50, p95 = statistics.median(finish), statistics.quantiles(finish, n=20)[18]
    requests = sum(s.requests for s in stats.values())
    postgres = cpu.total()
    return {
        "portals": fleet.portals,
        "objects": objects,
        "wave_s": round(max(finish), 2),
        "objects_per_s": round(objects / max(finish), 1),
        "interactive_first_progress_s": round(first, 2),
        "portal_finish_p50_s": round(p50, 2),
        "portal_finish_p95_s": round(p95, 2),
        "portal_finish_spread": round(p95 / p50, 2),
        "cpu_s_per_1k_objects_workers": round(sum(r.cpu_s for r in reaped) * per_1k, 3),
        "cpu_s_per_1k_objects_postgres": None if postgres is None else round(postgres * per_1k, 3),
        "worker_peak_rss_mb": round(max(r.peak_rss_mb for r in reaped), 1),
        "share_429": round(sum(s.status_429 for s in stats.values()) / max(requests, 1), 4),
        "requests": requests,
        "bytes_per_object": round(int(storage["content_bytes"]) / max(objects, 1)),
        "database_bytes": int(storage["database_bytes"]),
        "measured_s": round(elapsed, 1),
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    """The fleets, measured in one run."""
    fleet = Fleet(
        args.portals,
        args.objects,
        args.workers,
        args.concurrency,
        args.interactive_after,
        args.latency_ms,
        args.ten_second_limit,
        args.hosts,
    )
    if not 1 <= args.hosts <= args.workers:
        raise SystemExit("--hosts: from 1 to --workers (each host runs at least one worker)")
    compare = args.portals // 4 if args.compare_portals is None else args.compare_portals
    print(f"load average {os.getloadavg()[0]:.2f}; {fleet}")
    figures: dict[str, Any] = {}
    server_url = args.database_url or os.environ.get("SMUVES_DATABASE_URL")
    async with scratch_server(server_url) as server:
        with tempfile.TemporaryDirectory(prefix="smuves-fleet") as tmp:
            if compare:
                small = await run_fleet(
                    server, Fleet(**{**vars(fleet), "portals": compare}), Path(tmp)
                )
                print(f"  {compare} portals: {json.dumps(small)}")
                figures["small_fleet"] = small
            large = await run_fleet(server, fleet, Path(tmp))
            print(f"  {fleet.portals} portals: {json.dumps(large)}")
    figures.update(large)
    if compare:
        ratio = large["worker_peak_rss_mb"] / figures["small_fleet"]["worker_peak_rss_mb"]
        figures["worker_rss_ratio"] = round(ratio, 3)
    figures["load_average_after"] = round(os.getloadavg()[0], 2)
    return figures


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--portals", type=int, default=200, help="scheduled portals (default 200)")
    add("--objects", type=int, default=1000, help="objects per portal (default 1000)")
    add("--workers", type=int, default=2, help="worker processes (default 2)")
    add("--concurrency", type=int, default=8, help="slots per worker (default 8)")
    add("--hosts", type=int, default=1, help="process groups of workers (default 1)")
    add("--compare-portals", type=int, default=None, help="a first fleet of this many portals")
    add("--interactive-after", type=float, default=10.0, help="seconds (default 10)")
    add("--latency-ms", type=float, default=50.0, help="fake HubSpot latency (default 50)")
    add("--ten-second-limit", type=int, default=190, help="per portal (default 190)")
    add("--database-url", help="server to create scratch databases on")
    add("--json", action="store_true", help="print a JSON object last")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args(sys.argv[1:])
    try:
        result = asyncio.run(main(arguments))
    except WorkerFailed as failed:
        raise SystemExit(f"bench_fleet: {failed}") from None
    if arguments.json:
        print(json.dumps(result))
