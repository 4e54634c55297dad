"""The runner's periodic duties: each an async function of the runner's database, run every
so many seconds between claims.

Every runner settles runs whose jobs all finished (reconcile: at start and every
``reconcile_interval_seconds``) and records the process's HubSpot request counts for the
dashboard (`workers.hubspot_minutes`); callers add their own (`smuves worker` fires due
schedules). A duty that fails is logged and tried again at its next turn, however it failed,
so no single row ends the worker; losing the database is left to the runner, which backs off.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from smuves_sync.db import Database
from smuves_sync.db.runs import run_reconcile
from smuves_sync.errors import DatabaseUnavailable, SmuvesError
from smuves_sync.settings import Settings
from smuves_sync.workers.hubspot_minutes import FLUSH_SECONDS, PROCESS_MINUTES

log = logging.getLogger(__name__)

Duty = Callable[[Database], Awaitable[object]]
# A duty run every `interval` seconds with the runner's database (e.g. fire due schedules).
Periodic = tuple[float, Duty]


class Duties:
    """The periodic duties of one runner and when each is next due (on the loop's clock)."""

    def __init__(self, settings: Settings, extra: Sequence[Periodic] = ()) -> None:
        self._duties: tuple[Periodic, ...] = (
            (settings.reconcile_interval_seconds, reconcile),
            (FLUSH_SECONDS, PROCESS_MINUTES.flush),
            *extra,
        )
        # All due at once: reconcile first, then the HubSpot counts, then the others.
        self._due = [0.0] * len(self._duties)

    def next_due(self) -> float:
        """When the soonest duty is due."""
        return min(self._due)

    async def run_due(
        self, db: Database, now: float, database_lost: Callable[[str, Exception], None]
    ) -> None:
        """Run the duties due at `now`; on a lost database, tell `database_lost` and stop (the
        duty stays due)."""
        for index, (interval, duty) in enumerate(self._duties):
            if now < self._due[index]:
                continue
            name = getattr(duty, "__name__", "a periodic duty")
            try:
                await duty(db)
            except DatabaseUnavailable as error:
                database_lost(getattr(duty, "__name__", "maintaining"), error)
                return
            except SmuvesError as error:
                log.error("%s failed: %s", name, error)
            except Exception as error:
                log.error(
                    "%s failed unexpectedly (%s: %s); the worker goes on",
                    name,
                    type(error).__name__,
                    error,
                    exc_info=error,
                )
            self._due[index] = now + interval


async def reconcile(db: Database) -> None:
    """Settle runs whose jobs are all finished."""
    settled = await run_reconcile(db)
    for run in settled:
        log.info("run %s settled as %s", run.id, run.status)
