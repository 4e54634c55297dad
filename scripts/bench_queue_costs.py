"""What each of the queue's guarantees costs a drain: the whole queue beside one without a part.

    .venv/bin/python scripts/bench_queue_costs.py [--parts notice,settle,cap,trigger,owner_key]
        [--pairs 4] [--jobs 20000] [--batch 256] [--processes 2] [--workers 4] [--json]

For each part, --pairs pairs of drains: the same backlog as scripts/bench_queue.py's (no-op
fetch jobs of 20 owners' portals, nine types each, smuves_sync/testing/queue_drains.py)
drained by complete-and-claim in --processes processes of --workers workers at --batch (in
this process when --processes is 1), once in a scratch database as migrated and once in one
with the part taken out (smuves_sync/testing/sql/queue_costs.sql), the two in turn and the
order alternating between pairs. A pair's figure is the drain without the part over the drain
with it (above 1: the part costs that much); the median of the pairs is printed, with each
pair's, since a pair moves by a tenth or more on a shared machine. The parts:

    notice    a settled run's notice to its owner (notify_settled_runs)
    settle    settling altogether: the probe for a finished run, its count, its notice
    cap       the portal cap's look at each fetch job's portal (job_within_portal_cap)
    trigger   the statement trigger that forgets what each finished fetch job saw
    owner_key the notice's foreign key to its user (a FOR KEY SHARE of the owner's row)

Taking a part out breaks the product in that database (runs never finish, a portal takes every
worker): these figures say what a guarantee costs, not a way to run without it.

The database: --database-url (a role that may CREATE DATABASE), else SMUVES_DATABASE_URL,
else the embedded PostgreSQL in a temporary directory. With --json the last line is one JSON
object: {"parts": {"notice": {"ratio": …, "pairs": […]}, …}, "batch": …, …}.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys

from psycopg import AsyncConnection

from smuves_sync.settings import Settings
from smuves_sync.testing.queries import testing_queries
from smuves_sync.testing.queue_drains import drain_backlog
from smuves_sync.testing.scratch import scratch_database, scratch_server

PARTS = ("notice", "settle", "cap", "trigger", "owner_key")
WHOLE = "whole"


async def take_out(url: str, part: str) -> None:
    """Remove `part` from the database at `url`; fail if the cut replaced nothing."""
    q = testing_queries()
    async with await AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(q[f"cost_cut_{part}"])
        cur = await conn.execute(q["cost_function_versions"])
        overloaded = [name for name, versions in await cur.fetchall() if versions != 1]
    if overloaded:
        raise SystemExit(
            f"taking out {part} added a function beside {', '.join(overloaded)}: its "
            "signature in queue_costs.sql no longer matches the product's"
        )


async def drain(server_url: str, part: str, args: argparse.Namespace) -> float:
    """Jobs per second of one drain in a fresh scratch database, without `part` unless whole."""
    async with scratch_database(server_url, prefix="smuves_bench") as url:
        return await drain_backlog(
            url,
            "pipelined",
            jobs=args.jobs,
            workers=args.workers,
            batch=args.batch,
            processes=args.processes,
            prepare=None if part == WHOLE else functools.partial(take_out, url, part),
            settles=part != "settle",  # without settling no run settles
        )


async def pairs_of(server_url: str, part: str, args: argparse.Namespace) -> list[float]:
    """The pairs' figures for `part`: the drain without it over the drain with it."""
    figures = []
    for pair in range(args.pairs):
        order = [WHOLE, part] if pair % 2 == 0 else [part, WHOLE]
        rates = {side: await drain(server_url, side, args) for side in order}
        figures.append(rates[part] / rates[WHOLE])
        print(f"  {part:<8} pair {pair + 1}: {rates[WHOLE]:8.0f} and {rates[part]:8.0f} jobs/s")
    return figures


async def main(args: argparse.Namespace) -> dict[str, object]:
    """Every part's pairs, then each part's median."""
    print(
        f"{args.processes} x {args.workers} workers, batch {args.batch}, {args.jobs} jobs, "
        f"{args.pairs} pairs a part"
    )
    results: dict[str, dict[str, object]] = {}
    async with scratch_server(args.database_url or Settings().database_url) as server_url:
        for part in args.parts:
            figures = await pairs_of(server_url, part, args)
            ratio = statistics.median(figures)
            results[part] = {"ratio": round(ratio, 3), "pairs": [round(f, 3) for f in figures]}
            print(f"without {part:<8}: {ratio:.3f}x the whole queue's pace")
    return {
        "parts": results,
        "jobs": args.jobs,
        "batch": args.batch,
        "processes": args.processes,
        "workers": args.workers,
    }


def parse_parts(text: str) -> list[str]:
    """The comma-separated parts of --parts, each one of PARTS."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown or not parts:
        raise argparse.ArgumentTypeError(
            f"parts are {', '.join(PARTS)}; not {', '.join(unknown) or 'none'}"
        )
    return parts


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parts", type=parse_parts, default=list(PARTS), help=f"of {', '.join(PARTS)}"
    )
    parser.add_argument("--pairs", type=int, default=4, help="pairs a part (default 4)")
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs a drain (default 20000)")
    parser.add_argument("--batch", type=int, default=256, help="jobs per claim (default 256)")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--workers", type=int, default=4, help="workers a process (default 4)")
    parser.add_argument("--database-url", help="server to create scratch databases on")
    parser.add_argument("--json", action="store_true", help="print a JSON object last")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args(sys.argv[1:])
    outcome = asyncio.run(main(arguments))
    if arguments.json:
        print(json.dumps(outcome))
