"""NOTIFY wake-ups: an insert wakes a listening worker, also after its connection drops."""

from __future__ import annotations

from smuves_sync.queue import Wakeups
from tests.support import query
from tests.support.factories import Factory


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
        assert len(await query(db_url, "terminate_listeners")) == 1
        assert await wakeups.wait(30)  # reconnected: look for work missed meanwhile
        await wakeups.ready()
        await factory.job(run)
        assert await wakeups.wait(30)
