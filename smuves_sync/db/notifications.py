"""Notifications: what a user is told (runs finished, jobs failed, schedules disabled), read
through the API (notifications.sql).

    async with db.as_user(user_id) as scoped:
        page = await notification_page(scoped, before=None, limit=50)   # newest first
        seen = await notification_mark_read(scoped, page.items[0].id)

    about = await notification_of_run(db, run_id)    # the operator: a run's, with emails

The queue's SQL functions write those about runs (notify_run_owners), and
`disable_due_schedule` (through `db.schedules.schedule_disable_due`) those about
schedules; row-level security and the queries show each user only their own.
`notification_of_run` runs as the login role (the dashboard's run page), across every tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from smuves_sync.db.database import Database
from smuves_sync.db.rows import KeysetPage, model_row


@dataclass(frozen=True, slots=True)
class Notification:
    """Something the user is told: a run finished, a job failed, a schedule was disabled."""

    id: int
    run_id: int | None
    # set for a note about a schedule (kind schedule_disabled)
    schedule_id: int | None
    kind: str
    message: str
    created_at: datetime
    read_at: datetime | None


@dataclass(frozen=True, slots=True)
class RunNotification:
    """A notification about a run, with its recipient's email (None: the user is gone)."""

    id: int
    email: str | None
    kind: str
    message: str
    created_at: datetime
    read_at: datetime | None


async def notification_page(
    db: Database, *, before: int | None, limit: int
) -> KeysetPage[Notification, int]:
    """The scoped user's notifications older than id `before` (None: the newest), newest
    first."""
    params = {"before": before, "limit": limit}
    rows = await db.all("notification_list", params, row=model_row(Notification))
    return KeysetPage.of(rows, limit, lambda notification: notification.id)


async def notification_mark_read(db: Database, notification_id: int) -> Notification | None:
    """Mark the notification read (the first read time is kept); None when not visible."""
    params = {"notification_id": notification_id}
    return await db.one("notification_read", params, row=model_row(Notification))


async def notification_of_run(
    db: Database, run_id: int, *, limit: int = 50
) -> list[RunNotification]:
    """The run's notifications, newest first, whoever they were for."""
    params = {"run_id": run_id, "limit": limit}
    return await db.all("notification_of_run", params, row=model_row(RunNotification))
