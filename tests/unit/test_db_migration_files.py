"""Discovering migration files (no database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from smuves_sync.db.migrations import discover, discover_functions, find_migrations_dir
from smuves_sync.errors import MigrationError


def test_files_are_ordered_by_version_with_a_checksum(tmp_path: Path) -> None:
    (tmp_path / "0002_second.sql").write_text("SELECT 2;")
    (tmp_path / "0001_first_one.sql").write_text("SELECT 1;")
    found = discover(tmp_path)
    assert [(m.version, m.name) for m in found] == [(1, "first_one"), (2, "second")]
    assert len(found[0].checksum) == 64
    assert found[0].checksum != found[1].checksum


@pytest.mark.parametrize("name", ["1_short.sql", "0001-dash.sql", "0001_Upper.sql", "0001_.sql"])
def test_badly_named_files_are_refused(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="NNNN_snake_name"):
        discover(tmp_path)


def test_a_version_used_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_a.sql").write_text("SELECT 1;")
    (tmp_path / "0001_b.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="also used by"):
        discover(tmp_path)


def test_an_explicit_directory_must_exist(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="does not exist"):
        find_migrations_dir(tmp_path / "nowhere")


def test_the_schema_snapshot_is_not_a_migration(tmp_path: Path) -> None:
    (tmp_path / "0001_first.sql").write_text("SELECT 1;")
    (tmp_path / "schema.sql").write_text("CREATE TABLE t ();")
    assert [m.name for m in discover(tmp_path)] == ["first"]


def test_function_files_are_ordered_by_name_with_a_checksum(tmp_path: Path) -> None:
    (tmp_path / "functions").mkdir()
    (tmp_path / "functions" / "runs.sql").write_text("SELECT 2;")
    (tmp_path / "functions" / "queue.sql").write_text("SELECT 1;")
    found = discover_functions(tmp_path)
    assert [f.name for f in found] == ["queue.sql", "runs.sql"]
    assert len(found[0].checksum) == 64
    assert discover_functions(tmp_path / "functions") == []  # no functions/ folder: none


def test_a_badly_named_function_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "functions").mkdir()
    (tmp_path / "functions" / "Queue.sql").write_text("SELECT 1;")
    with pytest.raises(MigrationError, match="snake_name"):
        discover_functions(tmp_path)
