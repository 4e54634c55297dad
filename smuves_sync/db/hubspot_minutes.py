"""hubspot_minutes: HubSpot requests and 429 answers per minute, over every process
(hubspot_minutes.sql, record_hubspot_minute).

    await hubspot_minute_record(worker_db, requests=12, rate_limited=1)   # any worker
    minutes = await hubspot_per_minute(db, minutes=60)   # login role -> list[HubSpotMinute]

A worker adds what its own counters gained (`smuves_sync.workers.hubspot_minutes`) through
the SECURITY DEFINER function record_hubspot_minute, which also forgets minutes older than a
week; only the owner and the login role read the table (the dashboard's overview).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row


@dataclass(frozen=True, slots=True)
class HubSpotMinute:
    """HubSpot requests and 429 answers in one minute, over every process."""

    minute: datetime
    requests: int
    rate_limited: int


async def hubspot_minute_record(
    db: Database, *, requests: int, rate_limited: int, now: datetime | None = None
) -> None:
    """Add one process's requests and 429s to the current minute."""
    params = {"requests": requests, "rate_limited": rate_limited, "now": now}
    await db.execute("hubspot_minute_record", params)


async def hubspot_per_minute(
    db: Database, *, minutes: int = 60, now: datetime | None = None
) -> list[HubSpotMinute]:
    """Requests and 429s in each of the last `minutes` minutes, oldest first, zeros included."""
    params = {"minutes": minutes, "now": now}
    return await db.all("hubspot_per_minute", params, row=model_row(HubSpotMinute))
