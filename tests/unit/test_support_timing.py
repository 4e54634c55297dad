"""`eventually`, the suite's one way to wait on real work: what it returns and how it fails."""

from __future__ import annotations

import itertools

import pytest

from tests.support import eventually


async def test_it_returns_the_first_true_value_of_a_sync_or_async_predicate() -> None:
    tries = itertools.count(1)
    assert await eventually(lambda: next(tries) >= 3 and "third", every=0) == "third"

    async def fourth() -> int:
        n = next(tries)
        assert n >= 4, f"only {n}"
        return n

    assert await eventually(fourth, every=0) == 4


async def test_at_the_deadline_it_fails_naming_what_and_the_last_try() -> None:
    def job_done() -> bool:
        raise AssertionError("job 7 stuck at 100")

    with pytest.raises(pytest.fail.Exception, match=r"job_done: not true within 0.05 s") as failed:
        await eventually(job_done, 0.05, every=0.01)
    assert "last try: job 7 stuck at 100" in str(failed.value)

    with pytest.raises(pytest.fail.Exception, match=r"woken: .*last try returned 0"):
        await eventually(lambda: 0, 0.02, every=0.01, what="woken")
