"""The migration runner against a real, empty database."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from smuves_sync.db.migrations import (
    FILE_NAME,
    FUNCTIONS_DIR,
    SNAPSHOT,
    discover,
    discover_functions,
    find_migrations_dir,
    migrate,
)
from smuves_sync.errors import MigrationError
from smuves_sync.testing.schema_dump import dump_schema
from tests.support import query

# Today's 29 files as they were before the fold: a database migrated with them must upgrade.
BEFORE_FOLD = Path(__file__).resolve().parents[1] / "fixtures" / "migrations_before_fold"
# A server built without lz4 keeps pglz (0002_schema): the one line of the catalog that may differ.
LZ4 = re.compile(r"^ALTER TABLE ONLY public\.\w+ ALTER COLUMN \w+ SET COMPRESSION lz4;\n", re.M)


def _catalog(url: str) -> str:
    return LZ4.sub("", dump_schema(url))


def _snapshot() -> str:
    return LZ4.sub("", (find_migrations_dir() / SNAPSHOT).read_text(encoding="utf-8"))


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
    "schema_functions",
    "content_types",
    "content_rejects",
    "hubspot_minutes",
    "operator_actions",
    "dashboard_confirmations",
    "changesets",
    "changeset_items",
    "push_intents",
    "workers",
}


async def _ledger(url: str) -> list[tuple[object, ...]]:
    return [tuple(row.values()) for row in await query(url, "catalog_migration_ledger")]


async def _tables(url: str) -> set[str]:
    return {row["tablename"] for row in await query(url, "catalog_public_tables")}


def test_every_migration_file_is_named_nnnn_snake_name() -> None:
    directory = find_migrations_dir()
    # Beside the versioned files: the snapshot, the functions' folder and the folder's README.
    others = {SNAPSHOT, FUNCTIONS_DIR, "README.md"}
    files = sorted(p.name for p in directory.iterdir() if p.name not in others)
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
    discover(directory)[-1].path.unlink()

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
    assert await _tables(empty_db_url) == {"one", "schema_migrations", "schema_functions"}


async def _functions_ledger(url: str) -> dict[str, str]:
    return {row["file"]: row["checksum"] for row in await query(url, "catalog_functions_ledger")}


async def _function_exists(url: str, name: str) -> bool:
    return bool((await query(url, "catalog_function_exists", name=name))[0]["found"])


async def test_a_new_database_has_the_catalog_of_schema_sql(empty_db_url: str) -> None:
    await migrate(empty_db_url)
    # When this fails after a schema change: `make schema`, then review the diff.
    assert _catalog(empty_db_url) == _snapshot()
    for name in ("public.claim_next_job", "public.reconcile_stuck_runs", "public.prune_runs"):
        assert await _function_exists(empty_db_url, name), name
    functions = discover_functions(find_migrations_dir())
    assert await _functions_ledger(empty_db_url) == {f.name: f.checksum for f in functions}


async def test_a_database_migrated_before_the_fold_upgrades_to_the_same_catalog(
    empty_db_url: str,
) -> None:
    await migrate(empty_db_url, BEFORE_FOLD)
    assert await _function_exists(empty_db_url, "public.claim_jobs_v2")

    applied = await migrate(empty_db_url)

    known = discover(find_migrations_dir())
    # The baseline stands for the folded history; only what follows it ran.
    assert [m.version for m in applied] == [m.version for m in known if m.version > 2]
    ledger = await _ledger(empty_db_url)
    assert [(v, n, c) for v, n, c, _ in ledger] == [(m.version, m.name, m.checksum) for m in known]
    assert _catalog(empty_db_url) == _snapshot()
    assert await migrate(empty_db_url) == []


async def test_part_of_the_folded_history_is_refused(empty_db_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "old"
    directory.mkdir()
    for old in sorted(BEFORE_FOLD.glob("*.sql"))[:10]:
        shutil.copy(old, directory)
    await migrate(empty_db_url, directory)

    with pytest.raises(MigrationError, match=r"part of the migration history.*0010_dashboard"):
        await migrate(empty_db_url)
    assert len(await _ledger(empty_db_url)) == 10


async def test_a_changed_functions_file_is_applied_again(empty_db_url: str, tmp_path: Path) -> None:
    directory = tmp_path / "migrations"
    shutil.copytree(find_migrations_dir(), directory)
    await migrate(empty_db_url, directory)
    before = await _functions_ledger(empty_db_url)
    edited = directory / FUNCTIONS_DIR / "clock.sql"
    edited.write_text(
        edited.read_text()
        + "\nCREATE OR REPLACE FUNCTION public.fold_probe() RETURNS integer\n"
        + "    LANGUAGE sql AS 'SELECT 1';\n"
    )

    assert await migrate(empty_db_url, directory) == []

    assert await _function_exists(empty_db_url, "public.fold_probe")
    after = await _functions_ledger(empty_db_url)
    assert after["clock.sql"] != before["clock.sql"]
    assert {k: v for k, v in after.items() if k != "clock.sql"} == {
        k: v for k, v in before.items() if k != "clock.sql"
    }


async def test_a_failing_functions_file_leaves_the_others_as_they_were(
    empty_db_url: str, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_good.sql").write_text("CREATE TABLE one (id int);")
    (directory / FUNCTIONS_DIR).mkdir()
    (directory / FUNCTIONS_DIR / "a.sql").write_text(
        "CREATE OR REPLACE FUNCTION public.a() RETURNS int LANGUAGE sql AS 'SELECT 1';"
    )
    (directory / FUNCTIONS_DIR / "b.sql").write_text("SELECT 1/0;")

    with pytest.raises(MigrationError, match=r"functions/b\.sql failed: division by zero"):
        await migrate(empty_db_url, directory)
    assert await _functions_ledger(empty_db_url) == {}
    assert not await _function_exists(empty_db_url, "public.a")
