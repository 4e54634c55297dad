#!/usr/bin/env python3
"""Benchmark the HubSpot client's pacing against the fake HubSpot server.

A fake portal of 20,000 site pages, 10,000 blog posts and 5 HubDB tables x 2,000 rows is
fetched with every type running concurrently, as the fetch jobs of one portal would (count,
then every page, live and archived), through one shared rate-limit budget. The server answers
after 50 ms and allows 100 requests per rolling 10 s, then 190. It runs in a subprocess, as
HubSpot runs elsewhere (`--server thread` puts it in this process, where its CPU time adds to
every request of the client).

For each limit it prints the wall time, the rate-limit bound (requests the fetch needed
divided by the allowed rate: no client can finish faster on average), their ratio and the
share of 429 responses, for the paced client and for a naive baseline (no pacing; a 429 makes
that request wait one second and try again). A last row fetches with no limit at all: paging
is sequential within a listing, so the longest listing sets a floor that no pacing can beat.
Every fetched id list is checked against the fake's ground truth.

    python scripts/bench_client.py            # the table
    python scripts/bench_client.py --json     # {"wall_s", "bound_s", "ratio", "share_429"}
                                              # of the paced client at 100 requests / 10 s
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smuves_sync.hubspot.client import HubSpotClient
from smuves_sync.hubspot.ratelimit import RateLimitRegistry
from smuves_sync.hubspot.retry import RetryPolicy
from smuves_sync.models import ContentType
from smuves_sync.settings import Settings
from smuves_sync.testing.fake_hubspot import (
    FakeHubSpot,
    PortalSpec,
    ServerConfig,
    serve_in_subprocess,
    serve_in_thread,
)

PORTAL_ID = 7001
TOKEN = "bench-token-not-a-secret"
TYPES = (
    ContentType.SITE_PAGE,
    ContentType.BLOG_POST,
    ContentType.HUBDB_TABLE,
    ContentType.HUBDB_ROW,
)
WINDOW_S = 10.0
NO_LIMIT = 1_000_000


@dataclass(frozen=True)
class CaseResult:
    """The figures of one fetch of the whole portal."""

    limit: int | None  # None: the server enforces no limit (the fetch's own critical path)
    paced: bool
    wall_s: float
    requests: int
    admitted: int
    status_429: int
    items: int

    @property
    def bound_s(self) -> float:
        """Requests that were served, at the allowed rate."""
        return self.admitted / (self.limit / WINDOW_S) if self.limit else 0.0

    @property
    def ratio(self) -> float:
        """Wall time over the bound."""
        return self.wall_s / self.bound_s if self.bound_s else 0.0

    @property
    def share_429(self) -> float:
        """429s over every response."""
        return self.status_429 / self.requests if self.requests else 0.0


def portal_spec(args: argparse.Namespace) -> PortalSpec:
    """The benchmark portal."""
    return PortalSpec(
        portal_id=PORTAL_ID,
        token=TOKEN,
        seed=42,
        site_pages=args.site_pages,
        blog_posts=args.blog_posts,
        hubdb_tables=args.tables,
        rows_per_table=args.rows,
    )


async def fetch_type(client: HubSpotClient, content_type: ContentType) -> list[str]:
    """What one fetch job does with the client: count (live and archived), then every page."""
    total = await client.count(content_type)
    total += await client.count(content_type, archived=True)
    ids: list[str] = []
    async for page in client.pages(content_type, expected=total):
        ids.extend(item.hubspot_id for item in page.items)
    return ids


async def fetch_portal(base_url: str, paced: bool) -> tuple[float, dict[ContentType, list[str]]]:
    """Fetch every type concurrently through one shared budget; wall time and ids per type."""
    settings = Settings(hubspot_base_url=base_url, hubspot_max_retries=5)
    limits = RateLimitRegistry(pacing=paced)
    retry = RetryPolicy(max_attempts=6, max_rate_limit_waits=10_000)
    clients = [HubSpotClient(PORTAL_ID, TOKEN, settings, limits, retry=retry) for _ in TYPES]
    try:
        started = time.monotonic()
        results = await asyncio.gather(
            *(fetch_type(client, ct) for client, ct in zip(clients, TYPES, strict=True))
        )
        wall = time.monotonic() - started
    finally:
        for client in clients:
            await client.aclose()
    return wall, dict(zip(TYPES, results, strict=True))


def run_case(args: argparse.Namespace, limit: int | None, paced: bool) -> CaseResult:
    """One fetch of a freshly generated portal behind a fresh fake server."""
    # "No limit" is a limit far above need, announced in the headers like any other.
    config = ServerConfig(latency_ms=args.latency_ms, ten_second_limit=limit or NO_LIMIT)
    if args.server == "thread":
        fake = FakeHubSpot([portal_spec(args)], config)
        with serve_in_thread(fake) as base_url:
            wall, fetched = asyncio.run(fetch_portal(base_url, paced))
            stats = fake.stats(PORTAL_ID)
            truth = {ct: fake.ground_truth(PORTAL_ID, ct) for ct in TYPES}
    else:
        with serve_in_subprocess([portal_spec(args)], config, startup_timeout_s=120) as server:
            wall, fetched = asyncio.run(fetch_portal(server.base_url, paced))
            stats = server.stats(PORTAL_ID)
            truth = {ct: server.ground_truth(PORTAL_ID, ct) for ct in TYPES}
    for content_type, ids in fetched.items():
        expected = sorted(item.hubspot_id for item in truth[content_type])
        if sorted(ids) != expected:
            raise SystemExit(
                f"{content_type}: fetched {len(ids)} ids, the portal has {len(expected)}"
            )
    return CaseResult(
        limit=limit,
        paced=paced,
        wall_s=wall,
        requests=stats.requests,
        admitted=stats.requests - stats.status_429,
        status_429=stats.status_429,
        items=sum(len(ids) for ids in fetched.values()),
    )


def describe(result: CaseResult) -> str:
    """One line of the table."""
    client = "paced" if result.paced else "naive"
    if result.limit is None:
        return (
            f"     none  {client:<6} {result.wall_s:7.1f} s        -        -  "
            f"{result.share_429:6.1%} ({result.status_429}/{result.requests})  {result.items:,}"
        )
    return (
        f"{result.limit:>5}/10s  {client:<6} {result.wall_s:7.1f} s  {result.bound_s:7.1f} s  "
        f"{result.ratio:6.3f}  {result.share_429:6.1%} ({result.status_429}/{result.requests})"
        f"  {result.items:,}"
    )


def main() -> None:
    """Run the cases and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the paced 100/10 s case")
    parser.add_argument("--limits", default="100,190", help="requests per 10 s, comma-separated")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--no-baseline", action="store_true", help="skip the naive client")
    parser.add_argument(
        "--server",
        choices=("process", "thread"),
        default="process",
        help="run the fake in a subprocess (the default: its CPU time stays out of the client's "
        "process, as HubSpot's would) or in a thread of this process (its work then slows the "
        "client's own requests)",
    )
    parser.add_argument("--site-pages", type=int, default=20_000)
    parser.add_argument("--blog-posts", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2_000)
    args = parser.parse_args()
    limits = [int(part) for part in args.limits.split(",")]

    if args.json:
        result = run_case(args, limits[0], paced=True)
        print(
            json.dumps(
                {
                    "wall_s": round(result.wall_s, 3),
                    "bound_s": round(result.bound_s, 3),
                    "ratio": round(result.ratio, 4),
                    "share_429": round(result.share_429, 4),
                }
            )
        )
        return

    print(f"latency {args.latency_ms:g} ms; types fetched concurrently: {', '.join(TYPES)}")
    print("limit      client    wall      bound    ratio   429s             items")
    for limit in limits:
        for paced in (True, False) if not args.no_baseline else (True,):
            print(describe(run_case(args, limit, paced)), flush=True)
    # Paging is sequential within a listing, so the longest one sets a floor of its own.
    print(describe(run_case(args, None, True)), "  <- no limit: the fetch's critical path")


if __name__ == "__main__":
    main()
