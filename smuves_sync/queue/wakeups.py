"""Wake-ups for idle workers: NOTIFY is the hint, polling the fallback.

    async with Wakeups(pool.conninfo, kinds={JobKind.FETCH}) as wakeups:
        await wakeups.ready()                    # listening (optional)
        while running:
            jobs = await queue.claim(...)
            if not jobs:
                await wakeups.wait(settings.poll_interval_seconds)

A background task LISTENs on its own connection. When the connection drops it reconnects
with backoff, LISTENs again and wakes the waiters once, because notifications sent while it
was away are lost. `wait` returns early on a notification of one of `kinds` (or any kind when
`kinds` is None) that arrived since the previous `wait` returned, so a notification that comes
in while the worker is busy claiming is not missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection
from types import TracebackType

from smuves_sync.db.listen import job_notifications
from smuves_sync.errors import DatabaseError
from smuves_sync.models import JobKind

log = logging.getLogger(__name__)


class Wakeups:
    """LISTEN in the background; `wait(timeout)` until a notification or the timeout."""

    def __init__(
        self,
        conninfo: str,
        *,
        kinds: Collection[JobKind] | None = None,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 30.0,
        idle_check: float = 30.0,
    ) -> None:
        self._url = conninfo
        self._kinds = None if kinds is None else {str(k) for k in kinds}
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay
        self._idle_check = idle_check
        self._woken = asyncio.Event()
        self._listening = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Wakeups:
        self._task = asyncio.create_task(self._listen(), name="smuves-wakeups")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def ready(self) -> None:
        """Return once the listener is connected and LISTENing."""
        await self._listening.wait()

    async def wait(self, timeout: float) -> bool:
        """Wait for a wake-up; True when woken, False when `timeout` seconds passed."""
        try:
            await asyncio.wait_for(self._woken.wait(), timeout)
        except TimeoutError:
            return False
        finally:
            self._woken.clear()
        return True

    def _on_listening(self) -> None:
        self._listening.set()
        self._woken.set()  # whatever was sent while we were not listening: look now

    async def _listen(self) -> None:
        delay = self._reconnect_delay
        while True:
            try:
                async for kind in job_notifications(
                    self._url, on_listening=self._on_listening, idle_check=self._idle_check
                ):
                    delay = self._reconnect_delay
                    if self._kinds is None or kind in self._kinds:
                        self._woken.set()
            except DatabaseError as exc:
                self._listening.clear()
                log.warning("job notifications lost (%s); reconnecting in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_reconnect_delay)
