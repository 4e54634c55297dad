"""scripts/bench_queue.py runs end to end on a tiny queue (its figures are not checked: a
benchmark prints numbers, tests do not time things)."""

from __future__ import annotations

import pytest

from tests.support import benchmark_figures

SCRIPT = "bench_queue.py"


async def test_every_loop_drains_the_queue_and_the_figures_come_out_as_json(
    pg_server: str,
) -> None:
    # the script exits non-zero when a loop loses or repeats a job, or leaves a run open
    figures = await benchmark_figures(
        SCRIPT,
        pg_server,
        *("--jobs", "40", "--baseline-jobs", "10", "--batch", "8", "--workers", "3"),
        *("--wakeups", "5", "--repeat", "2"),
    )
    assert (figures["jobs"], figures["workers"], figures["batch"], figures["repeat"]) == (
        40,
        3,
        8,
        2,
    )
    for name in ("jobs_per_s", "batched_jobs_per_s", "baseline_jobs_per_s"):
        # today's claim, and the same loop on the claim of before fair claims
        assert figures[name] > 0 and figures[f"fifo_{name}"] > 0
    assert figures["ratio_to_fifo"] > 0
    assert 0 < figures["wakeup_p50_ms"] <= figures["wakeup_p95_ms"]


# some twenty scratch databases, each created and migrated: under a minute here, longer on a
# loaded machine
@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_peers_drain_through_pgqueuer_beside_ours_in_processes(pg_server: str) -> None:
    # a drain that loses or repeats a job, ours or pgqueuer's, exits non-zero
    figures = await benchmark_figures(
        SCRIPT,
        pg_server,
        *("--jobs", "60", "--baseline-jobs", "10", "--batch", "8", "--workers", "2"),
        *("--processes", "2", "--peers", "--wakeups", "3", "--repeat", "1"),
        timeout=290,
    )
    assert figures["processes"] == 2
    for name in (
        "peer_pgqueuer_1p_jobs_per_s_batch_256",
        "peer_pgqueuer_2p_jobs_per_s_batch_256",
        "peer_pgqueuer_2p_jobs_per_s_batch_10",
        "jobs_per_s_batch_10",
        "jobs_per_s_batch_256",
        "ratio_to_pgqueuer_2p_batch_10",
        "ratio_to_pgqueuer_2p_batch_256",
        "one_at_a_time_jobs_per_s",
        "slots_jobs_per_s_batch_10",
        "slots_ratio_to_pgqueuer_2p_batch_10",
        "fifo_jobs_per_s_batch_256",
        "fifo_ratio_to_pgqueuer_2p_batch_256",
        "ratio_to_fifo_2p_batch_256",
        "wakeup_p95_ms",
        "peer_pgqueuer_wakeup_p95_ms",
    ):
        assert isinstance(figures[name], float) and figures[name] > 0, name
    # the figures of before are all still there
    assert figures["jobs_per_s"] > 0 and figures["ratio_to_fifo"] > 0
