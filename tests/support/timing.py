"""Time in tests: a fixed clock to inject, the database's clock, waiting on real work, racing.

    [job] = await queue.claim([JobKind.FETCH], now=T0)     # time injected, nothing slept
    due_at = await db_now(db)
    await eventually(run_settled, timeout=60)               # poll a worker's outcome
    outcomes = await all_at_once(20, lambda: start_fetch(worker, portal))   # a race

The queue functions take `now`, so most tests never wait. Where a test watches real work (a
runner, a subprocess), `eventually` polls a predicate with a deadline instead of a loop of
sleeps written out again in each test.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, overload

import pytest

from smuves_sync.db import Database
from tests.support.sql import query

T = TypeVar("T")

# Injected "now" for the queue functions: far from the real clock, so that planted rows
# are due (their run_after defaults to the real now) and nothing depends on timing.
T0 = datetime(2031, 1, 1, 12, 0, tzinfo=UTC)


async def db_now(db: Database) -> datetime:
    """The database's clock."""
    [row] = await query(db, "opscheck_db_now")
    now: datetime = row["now"]
    return now


@overload
async def eventually(
    predicate: Callable[[], Awaitable[T]],
    timeout: float = 30,
    *,
    every: float = 0.05,
    what: str | None = None,
) -> T: ...


@overload
async def eventually(
    predicate: Callable[[], T],
    timeout: float = 30,
    *,
    every: float = 0.05,
    what: str | None = None,
) -> T: ...


async def eventually(
    predicate: Callable[[], Awaitable[T] | T],
    timeout: float = 30,
    *,
    every: float = 0.05,
    what: str | None = None,
) -> T:
    """Poll `predicate` until it returns something true, and return that.

    The predicate may be sync or async, and may `assert` instead of returning a bool: a falsy
    value or an AssertionError both mean "not yet". When `timeout` seconds pass the test fails,
    naming `what` (default: the predicate's name) and what the last try found.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            outcome = predicate()
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except AssertionError as failed:
            last = f"last try: {failed}" if str(failed) else "last try: an assertion failed"
        else:
            if outcome:
                return outcome
            last = f"last try returned {outcome!r}"
        if loop.time() >= deadline:
            name = what or getattr(predicate, "__name__", repr(predicate))
            pytest.fail(f"{name}: not true within {timeout:g} s ({last})")
        await asyncio.sleep(every)


async def all_at_once(
    n: int, act: Callable[[], Awaitable[T]], *, return_exceptions: bool = False
) -> list[Any]:
    """Start `act` `n` times behind one gate, open it, and gather the outcomes in order
    (with `return_exceptions`, an exception is an outcome rather than raised)."""
    gate = asyncio.Event()

    async def gated() -> T:
        await gate.wait()
        return await act()

    tasks = [asyncio.create_task(gated()) for _ in range(n)]
    gate.set()
    return await asyncio.gather(*tasks, return_exceptions=return_exceptions)
