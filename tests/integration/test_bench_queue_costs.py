"""scripts/bench_queue_costs.py takes each part out and drains a tiny queue beside the whole
(its figures are not checked: a benchmark prints numbers, tests do not time things)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import run

SCRIPT = Path(__file__).parents[2] / "scripts" / "bench_queue_costs.py"


# eight scratch databases, each created and migrated, and a worker process for each drain
@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_every_part_comes_out_and_the_queue_still_drains(pg_server: str) -> None:
    done = await run(
        sys.executable,
        str(SCRIPT),
        *("--jobs", "27", "--pairs", "1", "--batch", "4", "--workers", "2"),
        *("--processes", "1", "--json", "--database-url", pg_server),
        timeout=290,
    )

    # a cut that fails, or replaces nothing, or a drain that loses a job exits non-zero
    assert done.code == 0, done.stderr
    figures = json.loads(done.stdout.splitlines()[-1])
    assert sorted(figures["parts"]) == ["cap", "notice", "settle", "trigger"]
    for part in figures["parts"].values():
        assert part["ratio"] > 0 and len(part["pairs"]) == 1


async def test_an_unknown_part_is_refused_before_anything_runs() -> None:
    done = await run(sys.executable, str(SCRIPT), "--parts", "notice,fairness", timeout=60)

    assert done.code == 2
    assert "not fairness" in done.stderr
