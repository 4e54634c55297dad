"""NOTIFY wake-ups: an insert wakes a listening worker, also after its connection drops."""

from __future__ import annotations

from pathlib import Path

import psycopg

from smuves_sync.db.queries import load_queries
from smuves_sync.queue import Wakeups
from tests.factories import Factory

ADMIN_SQL = load_queries(Path(__file__).parents[1] / "sql")


async def test_a_new_job_wakes_a_listening_worker(db_url: str, factory: Factory) -> None:
    run = await factory.run()
    async with Wakeups(db_url) as wakeups:
        await wakeups.ready()
        await wakeups.wait(0)  # drop the wake-up that every (re)connect gives
        await factory.job(run)
        assert await wakeups.wait(30)


async def test_the_listener_reconnects_and_listens_again(db_url: str, factory: Factory) -> None:
    run = await factory.run()
    async with Wakeups(db_url, reconnect_delay=0.01) as wakeups:
        await wakeups.ready()
        await wakeups.wait(0)
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as admin:
            cur = await admin.execute(ADMIN_SQL["terminate_listeners"])
            assert len(await cur.fetchall()) == 1
        assert await wakeups.wait(30)  # reconnected: look for work missed meanwhile
        await wakeups.ready()
        await factory.job(run)
        assert await wakeups.wait(30)
