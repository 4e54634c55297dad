"""scripts/bench_sync.py's phases run end to end at tiny sizes: the sync and the export in
processes of their own logged in as smuves_worker_login, the ingest and history phases on a
few pages, baseline, bound, floor and the database without history included (their figures are not
checked: a benchmark prints numbers, tests do not time things)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tests.support import benchmark_figures, run

SCRIPT = Path(__file__).parents[2] / "scripts" / "bench_sync.py"


async def _figures(pg_server: str, *args: str, timeout: float = 120) -> dict[str, Any]:
    """Run the benchmark with `args` against `pg_server`; the figures it prints as JSON."""
    return await benchmark_figures(SCRIPT.name, pg_server, *args, timeout=timeout)


async def test_the_worker_processes_sync_the_portal_and_the_export_child_exports(
    pg_server: str,
) -> None:
    figures = await _figures(
        pg_server,
        *("--only", "sync", "--objects", "60", "--only", "export", "--export-rows", "200"),
        timeout=60,
    )
    # Two `smuves worker` processes stored every object (they log in as smuves_worker_login:
    # the bench gives them nothing else) and `smuves export`'s code wrote every row.
    assert figures["sync_objects"] == 60
    assert figures["sync_requests"] > 0 and figures["worker_peak_rss_mb"] > 0
    assert (figures["export_rows"], figures["export_peak_rss_mb_10k"] > 0) == (200, True)


async def test_a_worker_that_exits_ends_the_sync_with_its_exit_code_and_last_lines(
    pg_server: str,
) -> None:
    # The operator's own (superuser) login as the workers': each refuses it and exits 2.
    env = {**os.environ, "SMUVES_WORKER_DATABASE_URL": pg_server}
    done = await run(
        sys.executable,
        str(SCRIPT),
        *("--only", "sync", "--objects", "60", "--database-url", pg_server),
        env=env,
        timeout=60,
    )

    assert done.code == 1
    assert "exited with code 2 while the benchmark waited on it" in done.stderr
    assert "the workers must log in as smuves_worker_login" in done.stderr


async def test_the_ingest_phase_stores_pages_every_way_and_prints_json(pg_server: str) -> None:
    figures = await _figures(
        pg_server, "--only", "ingest", "--ingest-rows", "2100", "--baseline-rows", "100"
    )
    assert figures["ingest_rows"] == 2100
    # the rounds store in chunks of 2,000, the pass over unchanged objects in one go: the
    # same ids must be the same objects, so that the pass writes nothing
    assert figures["ingest_unchanged_rows_written"] == 0
    for name in (
        "ingest_rows_per_s",
        "ingest_unchanged_rows_per_s",
        "ingest_4_writers_rows_per_s",
        "ingest_baseline_one_by_one_rows_per_s",
        "ingest_bound_jsonb_parse_only_rows_per_s",
        "ingest_bound_jsonb_parse_only_4_writers_rows_per_s",
        "ingest_floor_bare_table_rows_per_s",
        "ingest_floor_bare_table_4_writers_rows_per_s",
        "ingest_floor_ratio_to_bound",
        "ingest_floor_4_writers_ratio_to_bound",
    ):
        assert figures[name] > 0, name


async def test_the_history_phase_measures_both_databases_and_prints_json(pg_server: str) -> None:
    figures = await _figures(
        pg_server, "--only", "history", "--history-rows", "300", "--history-rounds", "2"
    )
    assert figures["history_objects"] == 300
    # Two rounds, each editing another tenth of the objects: one version per edit.
    assert figures["history_versions_written"] == figures["history_documents_kept"] == 60
    # Each edited object changed for the first time: its first version left its row too.
    assert figures["history_version_rows_written"] == 120
    for name in (
        "history_first_sync_rows_per_s",
        "history_first_sync_without_history_rows_per_s",
        "history_unchanged_resync_rows_per_s",
        "history_unchanged_resync_without_history_rows_per_s",
        "history_changed_10pct_resync_rows_per_s",
        "history_changed_10pct_resync_without_history_rows_per_s",
        "history_content_items_bytes_per_object",
        "history_versions_bytes_per_object",
        "history_versions_bytes_per_version",
    ):
        assert figures[name] > 0, name
    assert "history_changed_10pct_cost_pct" in figures


async def test_the_resync_phase_reports_rows_wal_and_sizes(pg_server: str) -> None:
    figures = await _figures(pg_server, "--resync", "--resync-objects", "300", "--objects", "1200")
    assert (figures["resync_objects"], figures["resync_fillfactor"]) == (300, 80)
    # Counts, not timings: an unchanged re-sync writes no content row, a changed one writes
    # exactly the changed objects, and a held snapshot leaves the table's size as it was.
    assert figures["resync_rows_written"] == 0
    assert (
        figures["resync_content_items_bytes_after"] == figures["resync_content_items_bytes_before"]
    )
    assert figures["resync_10pct_rows_written"] == figures["resync_10pct_objects_changed"] > 0
    assert figures["resync_open_txn_rows_written"] == 0
    assert figures["resync_open_txn_growth_bytes"] == 0
    assert figures["resync_wal_bytes_per_object"] > 0


async def test_the_incremental_phase_counts_requests_and_checks_content(pg_server: str) -> None:
    figures = await _figures(pg_server, "--only", "incremental", "--objects", "1200")
    assert figures["resync_content_exact"] is True
    assert figures["resync_full_requests"] > figures["resync_unchanged_requests"] > 0
    for name in ("resync_unchanged", "resync_1pct", "resync_10pct", "resync_purge"):
        assert 0 < figures[f"{name}_request_ratio"] <= 1.05, name
    # The purges from the recycle bin are found by count windows (the archived pass's count).
    assert figures["resync_1pct_deletions"].get("count windows", 0) > 0
