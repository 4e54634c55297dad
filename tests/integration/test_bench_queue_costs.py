"""scripts/bench_queue_costs.py takes each part out and drains a tiny queue beside the whole
(its figures are not checked: a benchmark prints numbers, tests do not time things)."""

from __future__ import annotations

import sys

import pytest

from tests.support import benchmark_figures, run
from tests.support.commands import SCRIPTS

SCRIPT = "bench_queue_costs.py"


# ten scratch databases, each created and migrated, and a worker process for each drain
@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_every_part_comes_out_and_the_queue_still_drains(pg_server: str) -> None:
    # a cut that fails or replaces nothing, a drain that loses a job or leaves a run open
    # (but without settling) exits non-zero
    figures = await benchmark_figures(
        SCRIPT,
        pg_server,
        *("--jobs", "27", "--pairs", "1", "--batch", "4", "--workers", "2", "--processes", "1"),
        timeout=290,
    )
    assert sorted(figures["parts"]) == ["cap", "notice", "owner_key", "settle", "trigger"]
    for part in figures["parts"].values():
        assert part["ratio"] > 0 and len(part["pairs"]) == 1


async def test_an_unknown_part_is_refused_before_anything_runs() -> None:
    done = await run(sys.executable, str(SCRIPTS / SCRIPT), "--parts", "notice,fairness")

    assert done.code == 2
    assert "not fairness" in done.stderr
