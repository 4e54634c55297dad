"""Schedules: adding, listing and removing them, and firing the due ones exactly once.

    schedule = await add_schedule(db, portal_id, "0 3 * * *", [ContentType.BLOG_POST])
    started = await fire_due_schedules(db)          # -> list[FetchStarted]; call it often
    spread = timedelta(seconds=settings.schedule_spread_seconds)   # both take spread=…

Cron expressions have five fields and are evaluated in UTC. Firing, for each due schedule,
in a transaction of its own: claim the schedule row (``FOR UPDATE SKIP LOCKED``, so of any
number of workers firing at once exactly one gets it), start a fetch of its portal and types
(``orchestrator.start_fetch``; when every type is already being fetched the firing is skipped
and logged), then move ``next_run_at`` to the next time the expression fires after now —
a schedule missed while no worker ran fires once, not once per missed slot. The commit
releases the row, which is no longer due.

Spread (``spread``, ``SMUVES_SCHEDULE_SPREAD_SECONDS``): a schedule's times are its cron times
plus its portal's stable offset within the window (`cron.spread_offset`), so a thousand
portals scheduled at "0 2 * * *" fire over ten minutes, each at the same minute every night.
``next_run_at`` holds the offset time, so nothing else changes: still one firing per worker
round, exactly once.

A schedule that cannot be fired — an expression that never fires (written past `schedule
add`), a row that trips an error nobody foresaw — is disabled in the same transaction,
announced (`disable_schedule`: a log line with its id, and a notification to its
owner, else its portal's owner) and passed over, so one bad row never stops the others or
the worker that fires them. Trouble with the database itself (a lost
connection, a missing grant) is not the row's fault: it propagates, and the schedule stays due.

Any role may fire: the claim, the advance and the disable go through SECURITY DEFINER functions
that see every portal's schedules and change only a due one
(migrations/functions/schedules.sql), and the fetch starts scoped to the schedule's portal
(``for_portal``), where the worker role may create a run only for a due schedule and jobs only
through ``enqueue_job``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from smuves_sync.content_text import replace_unstorable
from smuves_sync.cron import (
    MUST_FIRE_WITHIN_YEARS,
    next_spread_fire_time,
    spread_offset,
    validate_cron,
)
from smuves_sync.db import Database
from smuves_sync.db.schedules import (
    DueSchedule,
    schedule_add,
    schedule_advance,
    schedule_claim_due,
    schedule_clock,
    schedule_disable_due,
    schedule_list,
    schedule_remove,
)
from smuves_sync.errors import (
    AllDuplicateJobs,
    DatabaseError,
    DatabaseRefused,
    DatabaseUnavailable,
    InvalidInput,
    NotFound,
    SchemaMismatch,
    SmuvesError,
)
from smuves_sync.models import ContentType, JobPriority, Schedule
from smuves_sync.orchestrator import FetchStarted, parse_content_types, start_fetch

log = logging.getLogger(__name__)

# Failures of the database itself rather than of a schedule row: a lost connection, a
# timeout, a serialization conflict (all DatabaseUnavailable), a missing grant or function
# after a half-finished deploy (DatabaseRefused, SchemaMismatch). Disabling schedules for them
# would turn off every schedule of every portal; they propagate instead and the schedule is
# fired by a later call.
_NOT_THE_ROWS_FAULT = (DatabaseUnavailable, DatabaseRefused, SchemaMismatch)


async def add_schedule(
    db: Database,
    portal_id: int,
    cron_expression: str,
    content_types: Sequence[ContentType | str] | None = None,
    *,
    owner_id: uuid.UUID | None = None,
    now: datetime | None = None,
    spread: timedelta = timedelta(0),
) -> Schedule:
    """A new enabled schedule fetching `content_types` (None: all) of `portal_id`.

    Raises `InvalidCronExpression` (also for one that would not fire within
    `MUST_FIRE_WITHIN_YEARS`), `UnknownContentType` / `InvalidInput`, or `NotFound` for an
    unknown portal; nothing is written then.
    """
    expression = validate_cron(cron_expression)
    types = (
        tuple(ContentType)
        if content_types is None
        else parse_content_types(str(t) for t in content_types)
    )
    if portal_id <= 0:
        raise InvalidInput(f"portal id must be a positive number, got {portal_id}")
    clock = await schedule_clock(db, now=now)
    schedule = await schedule_add(
        db,
        portal_id,
        expression,
        types,
        next_run_at=next_spread_fire_time(
            expression,
            clock.astimezone(UTC),
            spread_offset(portal_id, spread.total_seconds()),
            within_years=MUST_FIRE_WITHIN_YEARS,
        ),
        owner_id=owner_id,
    )
    if schedule is None:
        raise NotFound(
            f"portal {portal_id} is not known; add it first with "
            f"`smuves portal add {portal_id} --name NAME`"
        )
    log.info(
        "schedule %s: portal %s at %r, next %s",
        schedule.id,
        portal_id,
        expression,
        schedule.next_run_at,
    )
    return schedule


async def list_schedules(db: Database, *, portal_id: int | None = None) -> list[Schedule]:
    """Every schedule, or those of `portal_id`."""
    return await schedule_list(db, portal_id=portal_id)


async def remove_schedule(db: Database, schedule_id: int) -> Schedule:
    """Delete a schedule; `NotFound` when there is no such schedule."""
    removed = await schedule_remove(db, schedule_id)
    if removed is None:
        raise NotFound(f"schedule {schedule_id} not found (see `smuves schedule list`)")
    return removed


async def fire_due_schedules(
    db: Database,
    *,
    now: datetime | None = None,
    max_attempts: int | None = None,
    spread: timedelta = timedelta(0),
) -> list[FetchStarted]:
    """Start a fetch for every schedule due at `now` (None: the database's clock); each one's
    next time is its next cron time plus its portal's offset within `spread`.

    Safe to call from any number of workers at once: each due schedule fires exactly once.
    Returns the fetches this call started. A schedule that cannot be fired is disabled and
    announced; database trouble propagates (the schedule being fired stays due and is fired
    by a later call).
    """
    started: list[FetchStarted] = []
    tried: list[int] = []
    while True:
        async with db.transaction() as tx:
            due = await schedule_claim_due(tx, skip=tried, now=now)
            if due is None:
                return started
            tried.append(due.schedule.id)
            try:
                # A savepoint: a failing firing rolls back alone, the row stays locked.
                async with tx.transaction() as firing:
                    fetch = await _fire(firing, due, max_attempts, spread, now)
            except _NOT_THE_ROWS_FAULT:
                raise
            except Exception as error:
                await _disable(tx, due.schedule, error, now)
                fetch = None
        if fetch is not None:
            started.append(fetch)


async def disable_schedule(
    db: Database, schedule: Schedule, reason: str, *, now: datetime | None = None
) -> None:
    """Disable the due `schedule`, which cannot be fired, and tell the people who must know
    why: a log line, and a notification to its owner (its portal's owner when it has none).

    Every disabled schedule is disabled and announced here and only here, in one statement
    (`schedule_disable_due`), so the notification commits or rolls back with the disable. A
    schedule no longer due (another worker fired it meanwhile) is left as it is.
    """
    message = (
        f"Schedule {schedule.id} of portal {schedule.portal_id} ({schedule.cron_expression!r}) "
        f"was disabled: it cannot be fired ({reason}). It fetches nothing until it is added "
        f"again, fixed, with `smuves schedule add`."
    )
    told = await schedule_disable_due(db, schedule.id, replace_unstorable(message), now=now)
    if told is None:
        log.warning("schedule %s is no longer due: not disabled", schedule.id)
        return
    log.error(
        "schedule %s (portal %s, %r) disabled, it cannot be fired: %s; fix it and add it "
        "again with `smuves schedule add`",
        schedule.id,
        schedule.portal_id,
        schedule.cron_expression,
        reason,
    )
    if not told:
        log.warning("schedule %s: nobody could be told that it was disabled", schedule.id)


async def _disable(
    tx: Database, schedule: Schedule, error: Exception, now: datetime | None
) -> None:
    reason = str(error) if isinstance(error, SmuvesError) else f"{type(error).__name__}: {error}"
    if not isinstance(error, SmuvesError):
        # Nobody foresaw this one: keep the traceback for whoever fixes the code.
        log.error("schedule %s failed to fire", schedule.id, exc_info=error)
    await disable_schedule(tx, schedule, reason, now=now)


async def _fire(
    tx: Database,
    due: DueSchedule,
    max_attempts: int | None,
    spread: timedelta,
    now: datetime | None,
) -> FetchStarted | None:
    """Fire one claimed schedule inside the claiming transaction and advance it.

    Raises when the schedule cannot be fired at all (`InvalidCronExpression` for an expression
    that never fires, or anything unforeseen); the caller disables it then.
    """
    schedule = due.schedule
    fired_at = due.fired_at.astimezone(UTC)
    offset = spread_offset(schedule.portal_id, spread.total_seconds())
    next_at = next_spread_fire_time(schedule.cron_expression, fired_at, offset)

    fetch: FetchStarted | None = None
    if schedule.next_run_at is None:
        log.info("schedule %s: first firing set to %s", schedule.id, next_at)
    else:
        try:
            fetch = await start_fetch(
                tx,
                schedule.portal_id,
                schedule.content_types,
                owner_id=schedule.owner_id,
                max_attempts=max_attempts,
                schedule_id=schedule.id,
                priority=JobPriority.SCHEDULED,
            )
        except AllDuplicateJobs as error:
            log.info("schedule %s skipped this firing: %s", schedule.id, error)
        except DatabaseError:
            raise  # the caller tells the database's trouble from the schedule's
        except SmuvesError as error:
            # start_fetch ran in a savepoint, rolled back; the schedule still moves on so a
            # lasting problem is reported once per firing, not once per poll.
            log.error("schedule %s could not start a fetch: %s", schedule.id, error)
        else:
            log.info(
                "schedule %s started run %s of portal %s (%d job(s), %d type(s) skipped)",
                schedule.id,
                fetch.run.id,
                schedule.portal_id,
                len(fetch.jobs),
                len(fetch.skipped),
            )
    await schedule_advance(
        tx,
        schedule.id,
        next_at,
        last_run_at=fired_at if fetch is not None else None,
        now=now,
    )
    return fetch
