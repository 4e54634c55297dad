"""Content types: one list in Python (`ContentType`), one in the database (`content_types`).

The two agree; a word outside the database's list is refused by every column that holds a
type; the list only grows. And a new type is one member of `ContentType` plus one migration:
the last test makes exactly those two edits in a copy of the product, then syncs the new type
from a HubSpot stand-in, lists its job and exports it, all through the `smuves` command.
"""

from __future__ import annotations

import ast
import asyncio
import json
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from psycopg import errors
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import smuves_sync
from smuves_sync.db import Pool
from smuves_sync.db.migrations import discover, find_migrations_dir
from smuves_sync.hubspot.registry import DEFAULT_REGISTRY
from smuves_sync.models import ContentType
from tests.support import query, smuves_env
from tests.support.factories import Factory

COLUMNS = ["runs", "schedules", "jobs", "content_items", "exports"]


async def _plant(pool: Pool, factory: Factory, column: str, word: str) -> None:
    """One row holding `word` in the `column` table's content type column."""
    run = await factory.run()
    await query(
        pool, f"content_types_in_{column}", word=word, run_id=run.id, portal_id=run.portal_id
    )


async def test_the_database_lists_the_python_content_types(admin_pool: Pool) -> None:
    words = sorted(t.value for t in ContentType)
    assert [r["name"] for r in await query(admin_pool, "content_types_listed")] == words
    [check] = await query(admin_pool, "content_types_domain_check")
    assert check["name"] == "content_type_known"
    listed = ", ".join(f"'{word}'::text" for word in words)
    assert check["definition"] == f"CHECK ((VALUE = ANY (ARRAY[{listed}]))) NOT VALID"
    # The client's registry is derived from the same list.
    assert DEFAULT_REGISTRY.names() == tuple(t.value for t in ContentType)
    assert all(DEFAULT_REGISTRY.get(t) is t.spec for t in ContentType)


@pytest.mark.parametrize("column", COLUMNS)
async def test_a_word_becomes_storable_in_every_column_once_the_list_has_it(
    admin_pool: Pool, factory: Factory, column: str
) -> None:
    with pytest.raises(errors.CheckViolation, match="content_type_known"):
        await _plant(admin_pool, factory, column, "blog_topic")
    await query(admin_pool, "content_types_add", word="blog_topic")
    await _plant(admin_pool, factory, column, "blog_topic")
    with pytest.raises(errors.CheckViolation, match="content_type_known"):
        await _plant(admin_pool, factory, column, "blog_topics")


async def test_the_list_only_grows(admin_pool: Pool) -> None:
    with pytest.raises(errors.FeatureNotSupported, match="only ever added"):
        await query(admin_pool, "content_types_remove", word="hubdb_row")
    assert len(await query(admin_pool, "content_types_listed")) == len(ContentType)


# --- a new type, end to end --------------------------------------------------------------------

# The one edit in Python: this member, appended to ContentType.
BLOG_TOPIC = """
    BLOG_TOPIC = ContentTypeSpec(
        name="blog_topic",
        paths={"v3": "/blogs/v3/topics", "2026-03": "/blogs/2026-03/topics"},
        page_size=100,
        fields=FieldMap(url=(), state=(), archived=("deletedAt",)),
    )
"""
# The one migration.
BLOG_TOPIC_MIGRATION = """\
SET LOCAL ROLE smuves_owner;
INSERT INTO public.content_types (name) VALUES ('blog_topic');
"""
PORTAL = 4242
NOT_DELETED = "1970-01-01T00:00:00Z"
TOPICS = [
    {"id": "11", "name": "Postgres", "slug": "postgres", "deletedAt": NOT_DELETED},
    {"id": "12", "name": "Queues", "slug": "queues", "deletedAt": NOT_DELETED},
    {"id": "13", "name": "Old news", "slug": "old-news", "deletedAt": "2025-01-02T03:04:05Z"},
]


def _topic(tag: dict[str, str]) -> dict[str, str]:
    return {
        **tag,
        "language": "en",
        "translatedFromId": "0",
        "created": "2025-01-01T00:00:00Z",
        "updated": "2025-06-01T00:00:00Z",
    }


async def _list_topics(request: Request) -> JSONResponse:
    archived = request.query_params.get("archived") == "true"
    tags = [_topic(t) for t in TOPICS if (t["deletedAt"] != NOT_DELETED) == archived]
    limit = int(request.query_params.get("limit", "100"))
    return JSONResponse({"total": len(tags), "results": tags[:limit]})


async def _account_details(request: Request) -> JSONResponse:
    return JSONResponse({"portalId": PORTAL, "timeZone": "UTC", "accountType": "STANDARD"})


@contextmanager
def _hubspot_with_blog_topics() -> Iterator[str]:
    """A HubSpot stand-in that lists blog topics (HubSpot's older name of tags), and says the
    token belongs to PORTAL (`portal add` asks)."""
    app = Starlette(
        routes=[
            Route("/blogs/v3/topics", _list_topics),
            Route("/account-info/v3/details", _account_details),
        ]
    )
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _checkout_with_a_new_type(root: Path) -> None:
    """A copy of the product with one member added to ContentType and one migration added."""
    shutil.copytree(
        Path(smuves_sync.__file__).parent,
        root / "smuves_sync",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    migrations = root / "migrations"
    shutil.copytree(find_migrations_dir(), migrations)

    module = root / "smuves_sync" / "content_types.py"
    lines = module.read_text().splitlines(keepends=True)
    [enum] = [
        node
        for node in ast.parse("".join(lines)).body
        if isinstance(node, ast.ClassDef) and node.name == "ContentType"
    ]
    last_member_end = enum.body[-1].end_lineno
    assert last_member_end is not None
    module.write_text("".join([*lines[:last_member_end], BLOG_TOPIC, *lines[last_member_end:]]))

    version = discover(migrations)[-1].version + 1
    (migrations / f"{version:04d}_blog_topics.sql").write_text(BLOG_TOPIC_MIGRATION)


async def _smuves(root: Path, env: dict[str, str], *args: str, stdin: str = "") -> tuple[int, str]:
    """Run `smuves ARGS…` from the checkout at `root`; its exit code and output."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "smuves_sync.cli",
        *args,
        cwd=root,
        env={**env, "PYTHONPATH": str(root)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(stdin.encode()), 90)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


@pytest.mark.slow
async def test_a_new_type_is_one_member_and_one_migration(
    db_url: str, admin_pool: Pool, tmp_path: Path
) -> None:
    root = tmp_path / "checkout"
    _checkout_with_a_new_type(root)
    exports = tmp_path / "exports"

    with _hubspot_with_blog_topics() as base_url:
        env = smuves_env(db_url, base_url, SMUVES_EXPORT_DIR=str(exports))

        async def smuves(*args: str, stdin: str = "") -> str:
            code, out = await _smuves(root, env, *args, stdin=stdin)
            assert code == 0, f"smuves {' '.join(args)} exited {code}:\n{out}"
            return out

        assert "blog_topics" in await smuves("db", "migrate")
        await smuves(
            "portal", "add", str(PORTAL), "--name", "Blog", "--owner", "ops@blog.example",
            "--token-stdin", stdin="pat-na1-blog\n",
        )  # fmt: skip
        # Enqueued, fetched and stored.
        await smuves("sync", str(PORTAL), "--types", "blog_topic")
        stored = await query(admin_pool, "content_types_stored", portal_id=PORTAL)
        assert [(r["content_type"], r["hubspot_id"], r["slug"], r["archived"]) for r in stored] == [
            ("blog_topic", "11", "postgres", False),
            ("blog_topic", "12", "queues", False),
            ("blog_topic", "13", "old-news", True),
        ]
        # Listed.
        [job] = json.loads(await smuves("jobs", "--portal", str(PORTAL), "--json"))
        assert (job["content_type"], job["status"], job["total"]) == ("blog_topic", "completed", 3)
        # Exported.
        await smuves("export", str(PORTAL), "--type", "blog_topic", "--format", "jsonl")
        [written] = list(exports.rglob("*.jsonl"))
        rows = [json.loads(line) for line in written.read_text().splitlines()]
        assert sorted(r["name"] for r in rows) == ["Old news", "Postgres", "Queues"]
        # And scheduled: the cron path accepts the word too.
        await smuves("schedule", "add", str(PORTAL), "--cron", "0 3 * * *", "--types", "blog_topic")
