"""Command line of the fake HubSpot server (scripts/fake_hubspot.py, python -m ...)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import replace

from smuves_sync.testing.fake_hubspot.fake import FakeHubSpot
from smuves_sync.testing.fake_hubspot.remote import FakeHubSpotRemote
from smuves_sync.testing.fake_hubspot.runner import bind_socket, make_server
from smuves_sync.testing.fake_hubspot.spec import (
    Churn,
    Poison,
    PortalSpec,
    ServerConfig,
    decode_setup,
    fault_from_text,
    poison_from_text,
)
from smuves_sync.testing.fake_hubspot.write_faults import write_fault_from_text

DEMO_PORTAL = "1001:demo-token:200,50,100,3,100,8,40,60,4"

_EPILOG = """\
portal format  ID:TOKEN:SITE_PAGES,LANDING_PAGES,BLOG_POSTS,TABLES,ROWS_PER_TABLE
                 [,AUTHORS,TAGS,REDIRECTS,BLOGS][:SEED]
               e.g. --portal 1001:demo-token:20000,0,10000,5,2000
                    --portal 1001:demo-token:200,50,100,3,100,8,40,60,4
               (default: one portal %(demo)s)
fault format   comma-separated key=value pairs of a fault rule:
                 kind=status|rate_limit|not_json|truncated|missing_results|wrong_types|
                      repeat_cursor|slow|drift
                 share=0..1   on=N+N+...  (1-based numbers of the requests the rule matches)
                 type=site_page|landing_page|blog_post|hubdb_table|hubdb_row|
                      blog_author|blog_tag|url_redirect|blog   portal_id=N
                 status=503   policy=TEN_SECONDLY_ROLLING|SECONDLY|DAILY   retry_after_s=N
                 delay_ms=N   deleted=N created=N edited=N (drift: objects deleted at the
                 listing's start, edited after them and created at its end before the
                 answer; with --cursors offset)
               e.g. --fault kind=status,status=500,type=blog_post,share=1
                    --fault kind=rate_limit,on=3+4,type=site_page
                    --cursors offset --fault kind=drift,on=4,type=blog_post,deleted=1
write faults   --write-fault with key=value pairs of a WriteFault (README, "Writes"):
                 kind=rate_limit|status|reject_batch|refuse_input|commit_then_status|
                      commit_then_drop|edit_after_read   type=…  portal_id=N  object_id=ID
                 on=N+N+...  share=0..1  status=N  policy=…  field=F  value=TEXT  draft=true
                 object_share=0..1
               e.g. --write-fault kind=commit_then_status,type=site_page,share=0.02
poison format  PORTAL_ID:kind=KIND,type=TYPE,slot=N[,table=N]  (one object served spoilt)
                 kind=nul_in_body|nul_in_key|nul_in_name|lone_surrogate|duplicate_id|
                      numeric_id|no_id|bad_field
               e.g. --poison 1001:kind=no_id,type=blog_post,slot=3
versions       --start-version N serves content N steps on; between two syncs, step a running fake:
                 fake_hubspot.py --advance PORTAL_ID --url http://127.0.0.1:PORT [--churn ...]
admin          GET /_fake/stats, POST /_fake/portals/ID/advance, GET /_fake/portals/ID/truth?type=T,
               POST /_fake/tokens/revoke {"token": ...}
               (every route: smuves_sync/testing/fake_hubspot/admin.py)
The first line printed on stdout is the base URL. The server runs until SIGTERM or Ctrl-C.
"""


def parse_portal(text: str, default_seed: int, archived_share: float) -> PortalSpec:
    """Parse one --portal value."""
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise ValueError(f"--portal {text!r}: expected ID:TOKEN:COUNTS[:SEED]")
    counts = [int(n) for n in parts[2].split(",")]
    if len(counts) not in (5, 9):
        raise ValueError(
            "--portal counts: SITE,LANDING,POSTS,TABLES,ROWS[,AUTHORS,TAGS,REDIRECTS,BLOGS]"
        )
    more = counts[5:] or [0, 0, 0, 0]
    return PortalSpec(
        portal_id=int(parts[0]),
        token=parts[1],
        seed=int(parts[3]) if len(parts) == 4 else default_seed,
        site_pages=counts[0],
        landing_pages=counts[1],
        blog_posts=counts[2],
        hubdb_tables=counts[3],
        rows_per_table=counts[4],
        archived_share=archived_share,
        blog_authors=more[0],
        blog_tags=more[1],
        url_redirects=more[2],
        blogs=more[3],
    )


def argument_parser() -> argparse.ArgumentParser:
    """The fake server's command line, also for tests that set a fake up as it would."""
    parser = argparse.ArgumentParser(
        prog="fake_hubspot.py",
        description="A fake HubSpot CMS API (pages, landing pages, blog posts, HubDB, blog "
        "authors, tags, blogs, URL redirects) serving "
        "deterministic generated portals, with HubSpot's limits, errors and injectable faults.",
        epilog=_EPILOG % {"demo": DEMO_PORTAL},
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    add("--port", type=int, default=0, help="port to listen on; 0 picks a free one (default)")
    add("--portal", action="append", default=[], help="a portal to host (repeatable)")
    add("--seed", type=int, default=0, help="seed of portals without their own (default 0)")
    add("--archived-share", type=float, default=0.05, help="share archived (default 0.05)")
    add("--latency-ms", type=float, default=0.0, help="added to every API answer (default 0)")
    add("--ten-second-limit", type=int, default=190, help="requests per rolling 10 s, 0 = off")
    add("--secondly-limit", type=int, default=0, help="requests per second, 0 = off (default)")
    add("--daily-limit", type=int, default=1_000_000, help="requests per UTC day, 0 = off")
    add("--retry-after", action="store_true", help="send Retry-After on limit 429s")
    add("--fault", action="append", default=[], help="a fault rule (repeatable), see below")
    add("--poison", action="append", default=[], help="a poisoned object (repeatable), see below")
    add("--write-fault", action="append", default=[], help="a write fault (repeatable), see below")
    add("--fault-seed", type=int, default=0, help="seed of fault shares (default 0)")
    add(
        "--timestamps",
        choices=("spec", "both"),
        default="spec",
        help="pages/posts carry created/updated (spec) or also createdAt/updatedAt (both)",
    )
    add(
        "--cursors",
        choices=("keyed", "offset"),
        default="keyed",
        help="the default order's `after` cursors name the last object served (keyed) or a "
        "position, as HubSpot's do (offset)",
    )
    add("--config-json", help="portals and config as JSON (replaces the flags above)")
    add("--start-version", type=int, default=0, help="serve every portal N versions on")
    add(
        "--churn",
        default="0.1,0.02,0.02,0.01",
        help="one version step as shares CHANGED,DELETED,ADDED,ARCHIVED[,UNARCHIVED] "
        "(default %(default)s)",
    )
    add(
        "--advance",
        type=int,
        metavar="PORTAL_ID",
        help="do not serve: step this portal of the running fake at --url one version on",
    )
    add("--url", help="base URL of a running fake (with --advance)")
    add("--log-level", default="warning", help="uvicorn log level (default warning)")
    return parser


def setup_from_args(args: argparse.Namespace) -> tuple[tuple[PortalSpec, ...], ServerConfig]:
    """Portals and server config from parsed arguments."""
    if args.config_json:
        return decode_setup(args.config_json)
    portals = tuple(
        parse_portal(text, args.seed, args.archived_share) for text in args.portal or [DEMO_PORTAL]
    )
    poisons: dict[int, list[Poison]] = {}
    for text in args.poison:
        portal_id, sep, rest = text.partition(":")
        if not sep:
            raise ValueError(f"--poison {text!r}: expected PORTAL_ID:kind=...,type=...,slot=N")
        poisons.setdefault(int(portal_id), []).append(poison_from_text(rest))
    unknown = set(poisons) - {p.portal_id for p in portals}
    if unknown:
        raise ValueError(f"--poison names portals that are not hosted: {sorted(unknown)}")
    portals = tuple(replace(p, poison=tuple(poisons.get(p.portal_id, ()))) for p in portals)
    config = ServerConfig(
        latency_ms=args.latency_ms,
        ten_second_limit=args.ten_second_limit or None,
        secondly_limit=args.secondly_limit or None,
        daily_limit=args.daily_limit or None,
        send_retry_after=args.retry_after,
        faults=tuple(fault_from_text(text) for text in args.fault),
        fault_seed=args.fault_seed,
        timestamps=args.timestamps,
        cursors=args.cursors,
    )
    return portals, config


def parse_churn(text: str) -> Churn:
    """Parse --churn: CHANGED,DELETED,ADDED,ARCHIVED[,UNARCHIVED] shares."""
    shares = [float(share) for share in text.split(",")]
    if len(shares) not in (4, 5):
        raise ValueError(
            "--churn takes four or five shares: CHANGED,DELETED,ADDED,ARCHIVED[,UNARCHIVED]"
        )
    changed, deleted, added, archived, *rest = shares
    return Churn(changed, deleted, added, archived, unarchived=rest[0] if rest else 0.0)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags, then serve until SIGTERM (or, with --advance, step a running fake)."""
    parser = argument_parser()
    args = parser.parse_args(argv)
    try:
        churn = parse_churn(args.churn)
        if args.advance is not None:
            if not args.url:
                parser.error("--advance needs --url")
            print(FakeHubSpotRemote(args.url).advance(args.advance, churn), flush=True)
            return
        portals, config = setup_from_args(args)
        write_faults = tuple(write_fault_from_text(text) for text in args.write_fault)
    except (ValueError, KeyError, TypeError) as exc:
        parser.error(str(exc))
    fake = FakeHubSpot(portals, config)
    fake.set_write_faults(write_faults)
    for portal in portals:
        for _ in range(args.start_version):
            fake.advance(portal.portal_id, churn)
    sock = bind_socket(args.host, args.port)
    server = make_server(fake, args.log_level, configure_logging=True)
    # The URL is the launcher's handshake: the socket already listens when it is printed.
    print(f"http://{args.host}:{sock.getsockname()[1]}", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
