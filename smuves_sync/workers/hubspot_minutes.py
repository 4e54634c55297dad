"""This process's HubSpot requests and 429s, written to the database a minute at a time.

The HubSpot client counts every answer in Prometheus counters (`smuves_sync.metrics`), which
live in the process that makes the requests. The operators' dashboard charts requests and
429s per minute over every worker, so a process that works jobs adds what its counters gained
since it last wrote to the current minute's row of ``hubspot_minutes`` (record_hubspot_minute):
one upsert every `FLUSH_SECONDS` while requests are being made, nothing while idle, and a
last one when its runner stops. A count lands in the minute it is written, at most
`FLUSH_SECONDS` after the request.

The counters belong to the process, so the mark of how much of them was written does too:
`PROCESS_MINUTES` is the one tally of the process, shared by every runner in it (a second
tally would write the same requests twice).
"""

from __future__ import annotations

import logging

from smuves_sync import metrics
from smuves_sync.db import Database
from smuves_sync.db.hubspot_minutes import hubspot_minute_record
from smuves_sync.errors import DatabaseError

log = logging.getLogger(__name__)

FLUSH_SECONDS = 5.0


def read_counters() -> tuple[int, int]:
    """(requests, 429 answers) this process has counted since it started."""
    requests = rate_limited = 0
    for family in metrics.HUBSPOT_REQUESTS.collect():
        for sample in family.samples:
            if not sample.name.endswith("_total"):
                continue
            requests += int(sample.value)
            if sample.labels.get("status") == "429":
                rate_limited += int(sample.value)
    return requests, rate_limited


class HubSpotMinutes:
    """Writes the growth of this process's HubSpot counters since the last write."""

    def __init__(self) -> None:
        self._written = read_counters()

    async def flush(self, db: Database) -> None:
        """Add what the counters gained to the current minute (nothing gained: no write)."""
        # Read and mark in one step (no await in between): two runners of the process
        # flushing at once each write their own share, never the same requests twice.
        requests, rate_limited = read_counters()
        gained = (requests - self._written[0], rate_limited - self._written[1])
        if gained[0] <= 0 and gained[1] <= 0:
            return
        self._written = (requests, rate_limited)
        try:
            await hubspot_minute_record(db, requests=gained[0], rate_limited=gained[1])
        except BaseException:
            # Not written: the next flush carries it.
            self._written = (self._written[0] - gained[0], self._written[1] - gained[1])
            raise

    async def flush_quietly(self, db: Database) -> None:
        """`flush`, logging database trouble instead of raising it (a runner's last write)."""
        try:
            await self.flush(db)
        except DatabaseError as error:
            log.warning("HubSpot request counts not recorded: %s", error)


PROCESS_MINUTES = HubSpotMinutes()
