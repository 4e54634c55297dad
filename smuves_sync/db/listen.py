"""LISTEN for new-job notifications on a dedicated connection.

    async for kind in job_notifications(conninfo, on_listening=ready.set):
        ...                                   # kind: the payload, 'fetch' or 'export'

The ``jobs`` insert trigger (and ``release_job``) NOTIFY channel ``smuves_jobs`` with the
job kind as payload. The generator pings the server whenever `idle_check` seconds pass
without a notification, so a dead connection is noticed; it raises `DatabaseUnavailable` (a
`DatabaseError`, as is anything else the driver raises) when the connection is lost.
Reconnecting is the caller's business (``smuves_sync.queue.Wakeups`` does it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from psycopg import AsyncConnection

from smuves_sync.db.driver_errors import translated
from smuves_sync.db.queries import queries

CHANNEL = "smuves_jobs"


async def job_notifications(
    conninfo: str,
    *,
    on_listening: Callable[[], None] | None = None,
    idle_check: float = 30.0,
) -> AsyncIterator[str]:
    """Yield the payload of every notification on the jobs channel, forever."""
    q = queries()
    with translated():
        async with await AsyncConnection.connect(conninfo, autocommit=True) as conn:
            await conn.execute(q["jobs_listen"])
            if on_listening is not None:
                on_listening()
            while True:
                async for notify in conn.notifies(timeout=idle_check):
                    yield notify.payload
                await conn.execute(q["session_ping"])
