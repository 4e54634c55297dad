"""scripts/bench_fleet.py runs end to end on a tiny fleet (its figures are not checked against
targets: a benchmark prints numbers, tests do not time things)."""

from __future__ import annotations

import pytest

from tests.support import benchmark_figures

SCRIPT = "bench_fleet.py"


@pytest.mark.slow
async def test_a_tiny_fleet_is_fetched_and_its_figures_come_out_as_json(pg_server: str) -> None:
    figures = await benchmark_figures(
        SCRIPT,
        pg_server,
        *("--portals", "3", "--objects", "30", "--compare-portals", "2", "--workers", "2"),
        *("--hosts", "2", "--concurrency", "4", "--interactive-after", "0.5", "--latency-ms", "5"),
    )
    assert figures["portals"] == 3 and figures["small_fleet"]["portals"] == 2
    # every portal's objects, and the person's small portal's
    assert figures["objects"] > 3 * 30
    for name in ("objects_per_s", "interactive_first_progress_s", "worker_peak_rss_mb"):
        assert figures[name] > 0
    assert figures["portal_finish_spread"] >= 1
    assert 0 <= figures["share_429"] < 1
    assert figures["worker_rss_ratio"] > 0
    # two hosts (process groups of their own SMUVES_WORKER_ID), each of which claimed work
    assert sorted(figures["jobs_by_host"]) == ["host0", "host1"]
    assert all(jobs > 0 for jobs in figures["jobs_by_host"].values())
