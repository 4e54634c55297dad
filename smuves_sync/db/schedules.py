"""Schedule rows: noun-verb functions over ``queries/schedules.sql``, taking a `Database`.

    s = await schedule_add(db, portal_id, "0 3 * * *", types, next_run_at=t)  # None: no portal
    await schedule_list(db, portal_id=None) / schedule_get(db, id) / schedule_remove(db, id)
    await schedule_of_portals(db, [portal_id, ...])          # the dashboard's portals page

The scheduler's side, inside one transaction (``db.transaction()``)::

    due = await schedule_claim_due(tx, skip=tried, now=None)   # locked until commit, or None
    await schedule_advance(tx, due.schedule.id, next_run_at, last_run_at=due.fired_at)
    told = await schedule_disable_due(tx, due.schedule.id, "Schedule 7 … disabled")

Each goes through a SECURITY DEFINER function (migrations/functions/schedules.sql) that sees
every portal's schedules, so any role may call them, and the last two change only a schedule
that is due: a worker may not otherwise write schedules nor notifications. ``schedule_disable``
is the operator's plain update.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Schedule


@dataclass(frozen=True, slots=True)
class DueSchedule:
    """A schedule claimed for firing, and the database time it is fired at."""

    schedule: Schedule
    fired_at: datetime


async def schedule_add(
    db: Database,
    portal_id: int,
    cron_expression: str,
    content_types: Sequence[ContentType],
    *,
    next_run_at: datetime,
    owner_id: uuid.UUID | None = None,
) -> Schedule | None:
    """A new enabled schedule of `portal_id`; None when the portal does not exist."""
    params = {"portal_id": portal_id, "owner_id": owner_id, "cron_expression": cron_expression}
    when = {"content_types": [str(t) for t in content_types], "next_run_at": next_run_at}
    return await db.one("schedule_add", {**params, **when}, row=model_row(Schedule))


async def schedule_list(db: Database, *, portal_id: int | None = None) -> list[Schedule]:
    """Every schedule (of `portal_id` when given), by portal then id."""
    portal_ids = None if portal_id is None else [portal_id]
    return await db.all("schedule_list", {"portal_ids": portal_ids}, row=model_row(Schedule))


async def schedule_of_portals(db: Database, portal_ids: Sequence[int]) -> list[Schedule]:
    """The schedules of the portals `portal_ids`, by portal then id."""
    params = {"portal_ids": list(portal_ids)}
    return await db.all("schedule_list", params, row=model_row(Schedule))


async def schedule_get(db: Database, schedule_id: int) -> Schedule | None:
    """The schedule `schedule_id`, or None."""
    return await db.one("schedule_get", {"schedule_id": schedule_id}, row=model_row(Schedule))


async def schedule_remove(db: Database, schedule_id: int) -> Schedule | None:
    """Delete the schedule; returns what was deleted, or None when there was none."""
    params = {"schedule_id": schedule_id}
    return await db.one("schedule_remove", params, row=model_row(Schedule))


async def schedule_clock(db: Database, *, now: datetime | None = None) -> datetime:
    """`now` when given, else the database's clock (the time schedules are measured by)."""
    clock: datetime = await db.only("schedule_clock", {"now": now}, row=scalar_row)
    return clock


async def schedule_claim_due(
    db: Database, *, skip: Sequence[int] = (), now: datetime | None = None
) -> DueSchedule | None:
    """Lock one due enabled schedule not in `skip` (SKIP LOCKED); None when none is due.

    Only meaningful inside a transaction: the lock, which keeps every other caller off this
    schedule, ends with it.
    """
    params = {"skip": list(skip), "now": now}
    return await db.one("schedule_claim_due", params, row=model_row(DueSchedule))


async def schedule_advance(
    db: Database,
    schedule_id: int,
    next_run_at: datetime,
    *,
    last_run_at: datetime | None = None,
    now: datetime | None = None,
) -> bool:
    """Set the next firing time of a schedule due at `now` (None: the database's clock), and
    the last one when it started a run; False, and nothing changed, when it is not due."""
    params = {"schedule_id": schedule_id, "next_run_at": next_run_at, "last_run_at": last_run_at}
    advanced: bool = await db.only("schedule_advance", {**params, "now": now}, row=scalar_row)
    return advanced


async def schedule_disable_due(
    db: Database, schedule_id: int, message: str, *, now: datetime | None = None
) -> bool | None:
    """Disable a schedule due at `now` that cannot be fired and tell its owner (its portal's
    owner when it has none) `message`: whether somebody was told; None, and nothing changed,
    when it is not due."""
    params = {"schedule_id": schedule_id, "message": message, "now": now}
    # One row always; its NULL (not due) reads as None.
    told: bool | None = await db.one("schedule_disable_due", params, row=scalar_row)
    return told


async def schedule_disable(db: Database, schedule_id: int) -> bool:
    """Stop a schedule from firing (the operator's); False when it was not seen."""
    return await db.execute("schedule_disable", {"schedule_id": schedule_id}) == 1
