"""The named-query loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from smuves_sync.db.queries import QueryFileError, load_queries, parse_queries, queries


def test_blocks_are_split_on_name_markers() -> None:
    text = (
        "-- header comment\n\n-- name: job_get\nSELECT 1\n\n-- name: run_get --\n-- why\nSELECT 2\n"
    )
    assert parse_queries(text, "x.sql") == {"job_get": "SELECT 1", "run_get": "-- why\nSELECT 2"}


def test_sql_before_the_first_name_is_refused() -> None:
    with pytest.raises(QueryFileError, match="before the first"):
        parse_queries("SELECT 1\n-- name: a\nSELECT 2", "x.sql")


def test_duplicate_and_empty_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(QueryFileError, match="defined twice"):
        parse_queries("-- name: a\nSELECT 1\n-- name: a\nSELECT 2", "x.sql")
    with pytest.raises(QueryFileError, match="is empty"):
        parse_queries("-- name: a\n-- name: b\nSELECT 2", "x.sql")
    (tmp_path / "one.sql").write_text("-- name: a\nSELECT 1\n")
    (tmp_path / "two.sql").write_text("-- name: a\nSELECT 2\n")
    with pytest.raises(QueryFileError, match="also defined elsewhere"):
        load_queries(tmp_path)


def test_package_queries_load_once_and_are_read_only() -> None:
    loaded = queries()
    assert loaded is queries()
    assert "job_get" in loaded
    with pytest.raises(TypeError):
        loaded["job_get"] = "SELECT 1"  # type: ignore[index]


def test_every_query_is_short_enough_for_psycopg_to_keep_its_conversion() -> None:
    # psycopg parses a query's placeholders again on every call once its text passes 4 KB
    # (psycopg._queries.MAX_CACHED_STATEMENT_LENGTH); a fetch runs content_upsert_page per page.
    sizes = {name: len(sql.encode()) for name, sql in queries().items()}
    assert {name: size for name, size in sizes.items() if size > 4096} == {}
