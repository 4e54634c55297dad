"""The migration runner against a real, empty database."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from smuves_sync.db.migrations import FILE_NAME, discover, find_migrations_dir, migrate
from smuves_sync.errors import MigrationError
from tests.support import query

EXPECTED_TABLES = {
    "app_users",
    "portals",
    "portal_members",
    "runs",
    "jobs",
    "job_leases",
    "content_items",
    "content_syncs",
    "fetch_seen",
    "fetch_reads",
    "content_versions",
    "exports",
    "notifications",
    "schedules",
    "schema_migrations",
    "content_types",
    "content_rejects",
    "hubspot_minutes",
    "operator_actions",
    "dashboard_confirmations",
    "workers",
}


async def _ledger(url: str) -> list[tuple[object, ...]]:
    return [tuple(row.values()) for row in await query(url, "catalog_migration_ledger")]


async def _tables(url: str) -> set[str]:
    return {row["tablename"] for row in await query(url, "catalog_public_tables")}


def test_every_migration_file_is_named_nnnn_snake_name() -> None:
    directory = find_migrations_dir()
    files = sorted(p.name for p in directory.iterdir())
    assert files, "no migration files found"
    assert all(FILE_NAME.match(name) for name in files), files
    versions = [m.version for m in discover(directory)]
    assert versions == list(range(1, max(versions) + 1))


async def test_apply_to_empty_database_then_rerun_is_a_no_op(empty_db_url: str) -> None:
    applied = await migrate(empty_db_url)
    known = discover(find_migrations_dir())
    assert [m.version for m in applied] == [m.version for m in known]
    assert await _tables(empty_db_url) == EXPECTED_TABLES
    ledger = await _ledger(empty_db_url)
    assert [(v, n, c) for v, n, c, _ in ledger] == [(m.version, m.name, m.checksum) for m in known]

    assert await migrate(empty_db_url) == []
    assert await _ledger(empty_db_url) == ledger


async def test_two_migrators_at_once_apply_each_file_once(empty_db_url: str) -> None:
    first, second = await asyncio.gather(migrate(empty_db_url), migrate(empty_db_url))
    known = discover(find_migrations_dir())
    # The advisory lock serialises them: one does everything, the other finds nothing to do.
    assert sorted(len(x) for x in (first, second)) == [0, len(known)]
    assert len(await _ledger(empty_db_url)) == len(known)


async def test_an_applied_file_that_changed_is_refused(empty_db_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(find_migrations_dir(), directory)
    await migrate(empty_db_url, directory)
    edited = directory / "0002_schema.sql"
    edited.write_text(edited.read_text() + "\n-- an innocent-looking edit\n")

    with pytest.raises(MigrationError, match=r"0002_schema\.sql was changed after it was applied"):
        await migrate(empty_db_url, directory)


async def test_a_database_newer_than_the_code_is_refused(empty_db_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(find_migrations_dir(), directory)
    await migrate(empty_db_url, directory)
    newest = max(directory.glob("*.sql"))
    newest.unlink()

    with pytest.raises(MigrationError, match="this code does not know"):
        await migrate(empty_db_url, directory)


async def test_a_failing_migration_leaves_nothing_behind(empty_db_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_good.sql").write_text("CREATE TABLE one (id int);")
    (directory / "0002_bad.sql").write_text("CREATE TABLE two (id int); SELECT 1/0;")

    with pytest.raises(MigrationError, match=r"0002_bad\.sql failed: division by zero"):
        await migrate(empty_db_url, directory)
    assert [row[1] for row in await _ledger(empty_db_url)] == ["good"]
    assert await _tables(empty_db_url) == {"one", "schema_migrations"}
