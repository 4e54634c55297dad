"""Jobs: reads, creation, the queue's state changes and the operators' requeues (jobs.sql).

    job = await job_get(db, 42)                                  # None: absent or not visible
    dead = await job_dead_page(db, before_id=None, limit=50)     # failed, newest first, named
    job = await job_enqueue(db, run_id, ContentType.SITE_PAGE)   # None: an equal job in flight
    claim = Claim("host:1", [JobKind.FETCH], limit=8, portal_max_running=5)
    jobs = await job_claim(db, claim)
    job = await job_heartbeat(db, job.id, job.lease_token)       # None: the lease was lost

Each queue call wraps one SQL function of migrations/functions/queue.sql or runs.sql (`now`
is injected time for tests, None the database's clock). The leases are
the database's (`job_leases`); a claim takes the jobs in line (priority, then each portal in
turn) and at most `portal_max_running` running fetch jobs of a portal. A fenced call answers
None, or leaves a job out of a list, when the job no longer runs under that lease token; `Queue`
(smuves_sync.queue), the layer workers use, turns that into `LeaseLost`. The operators'
requeues (`requeue_job`, `retry_failed_jobs`) are smuves_sync.db.job_requeues'; the dashboard's
dead letter (`job_dead_page`, `job_dead_count`) reads inside `Database.custom_plans`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from psycopg.rows import scalar_row

from smuves_sync.db.database import Database
from smuves_sync.db.rows import model_row
from smuves_sync.models import ContentType, Job, JobKind, JobPriority, JobStatus

# (job id, lease token) of a claimed job.
Lease = tuple[int, uuid.UUID]

# The kinds whose completion commits without waiting for the WAL flush. A crash of Postgres
# can lose the last such completions, each whole with the job's last writes and its run's
# settling: the job is running again under a lease no worker holds, and when that expires it
# is run again, as if its worker had died just before finishing (a fetch reads HubSpot again,
# an export writes its file again). A push's completion waits for the flush: what it wrote
# to HubSpot stays written whatever Postgres loses.
UNFLUSHED_COMPLETIONS = frozenset({JobKind.FETCH, JobKind.EXPORT})


def completion_flushes(done: Iterable[Job]) -> bool:
    """Whether completing `done` in one transaction must wait for the WAL flush: for a kind
    not in UNFLUSHED_COMPLETIONS, and on a job's last attempt, whose lost completion would not
    be run again but failed when its lease expired."""
    return any(
        job.kind not in UNFLUSHED_COMPLETIONS or job.attempts >= job.max_attempts for job in done
    )


@dataclass(frozen=True, slots=True)
class Claim:
    """What a claim asks for: whose it is, which kinds (None: any), how many jobs, optionally
    one run only (`smuves sync` works its own run), and the cap on a portal's running fetches."""

    worker: str
    kinds: Sequence[JobKind] | None
    limit: int = 1
    run_id: int | None = None
    portal_max_running: int = 5

    def params(self, now: datetime | None) -> dict[str, Any]:
        """The claim queries' parameters."""
        kinds = None if self.kinds is None else [str(k) for k in self.kinds]
        return {
            "worker": self.worker,
            "kinds": kinds,
            "limit": self.limit,
            "run_id": self.run_id,
            "portal_max_running": self.portal_max_running,
            "settle_run_ids": None,
            "now": now,
        }


@dataclass(frozen=True, slots=True)
class PortalJob:
    """A job with its portal's name."""

    job: Job
    portal_name: str


def _words(values: Sequence[StrEnum] | None) -> list[str] | None:
    return None if values is None else [str(v) for v in values]


def _lease(job_id: int, lease_token: uuid.UUID, now: datetime | None) -> dict[str, Any]:
    return {"job_id": job_id, "lease_token": lease_token, "now": now}


def _leases(leases: Sequence[Lease], now: datetime | None) -> dict[str, Any]:
    return {
        "job_ids": [job_id for job_id, _ in leases],
        "lease_tokens": [token for _, token in leases],
        "now": now,
    }


# -- reads and creation ---------------------------------------------------------------------


async def job_get(db: Database, job_id: int) -> Job | None:
    """The job `job_id`, or None when it does not exist or is not visible."""
    return await db.one("job_get", {"job_id": job_id}, row=model_row(Job))


async def job_list(
    db: Database,
    *,
    statuses: Sequence[JobStatus] | None = None,
    kinds: Sequence[JobKind] | None = None,
    portal_id: int | None = None,
    run_id: int | None = None,
    limit: int = 50,
) -> list[Job]:
    """Jobs, newest first, filtered by statuses, kinds, portal and run."""
    params = {"portal_id": portal_id, "run_id": run_id, "limit": limit}
    filters = {"statuses": _words(statuses), "kinds": _words(kinds)}
    return await db.all("job_list", {**params, **filters}, row=model_row(Job))


async def job_list_in_flight(db: Database, portal_id: int, kind: JobKind) -> list[Job]:
    """The pending and running jobs of `kind` for `portal_id`."""
    params = {"portal_id": portal_id, "kind": str(kind)}
    return await db.all("job_list_in_flight", params, row=model_row(Job))


def _dead_params(
    status: JobStatus,
    portal_id: int | None,
    run_id: int | None,
    content_type: ContentType | None,
) -> dict[str, Any]:
    if status not in (JobStatus.FAILED, JobStatus.STOPPED):
        raise ValueError(f"the dead letter holds failed or stopped jobs, not {status}")
    return {
        "status": str(status),
        "portal_id": portal_id,
        "run_id": run_id,
        "content_type": str(content_type) if content_type is not None else None,
    }


async def job_dead_page(
    db: Database,
    *,
    status: JobStatus = JobStatus.FAILED,
    portal_id: int | None = None,
    run_id: int | None = None,
    content_type: ContentType | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[PortalJob]:
    """Failed (or stopped) jobs, newest first, below job id `before_id` (None: the newest)."""
    params = _dead_params(status, portal_id, run_id, content_type)
    page = {"before_id": before_id, "limit": limit}
    return await db.all("job_dead_page", {**params, **page}, row=model_row(PortalJob))


async def job_dead_count(
    db: Database,
    *,
    cap: int,
    status: JobStatus = JobStatus.FAILED,
    portal_id: int | None = None,
    run_id: int | None = None,
    content_type: ContentType | None = None,
) -> tuple[int, bool]:
    """How many jobs `job_dead_page` pages through: (count up to `cap`, more than `cap`)."""
    params = _dead_params(status, portal_id, run_id, content_type)
    jobs: int | None = await db.one("job_dead_count", {**params, "cap": cap}, row=scalar_row)
    assert jobs is not None  # count(*) always answers
    return min(jobs, cap), jobs > cap


async def job_get_many(db: Database, job_ids: Sequence[int]) -> list[PortalJob]:
    """The jobs among `job_ids` that exist, newest first, with their portals' names."""
    params = {"job_ids": list(job_ids)}
    return await db.all("job_get_many", params, row=model_row(PortalJob))


async def job_enqueue(
    db: Database,
    run_id: int,
    content_type: ContentType,
    *,
    priority: JobPriority = JobPriority.SCHEDULED,
    max_attempts: int = 3,
    run_after: datetime | None = None,
    total: int | None = None,
    idempotency_key: str | None = None,
    schedule_id: int | None = None,
) -> Job | None:
    """A new pending job of run `run_id` (its portal and kind), or None when an equal job is
    already in flight or `idempotency_key` was used before. Wakes listening workers.

    A worker adds jobs only for the due schedule `schedule_id`; the API only to its user's
    portals' runs (enqueue_job refuses anything else with InsufficientPrivilege); the
    database lowers `priority` to what the login may set (a worker's to SCHEDULED)."""
    params = {"run_id": run_id, "content_type": str(content_type), "max_attempts": max_attempts}
    params["priority"] = int(priority)
    more = {"run_after": run_after, "total": total, "idempotency_key": idempotency_key}
    return await db.one(
        "job_enqueue", {**params, **more, "schedule_id": schedule_id}, row=model_row(Job)
    )


# -- the queue ------------------------------------------------------------------------------


async def job_claim(db: Database, claim: Claim, *, now: datetime | None = None) -> list[Job]:
    """Claim up to `claim.limit` lease-expired or due jobs, in line; returned in id order."""
    return await db.all("job_claim", claim.params(now), row=model_row(Job))


async def job_claim_next(db: Database, claim: Claim, *, now: datetime | None = None) -> Job | None:
    """Claim one job (as `claim_next_job`, any run), or None when nothing is due."""
    return await db.one("job_claim_next", claim.params(now), row=model_row(Job))


async def job_complete_and_claim(
    db: Database,
    leases: Sequence[Lease],
    claim: Claim,
    *,
    run_ids: Sequence[int] = (),
    flush: bool = True,
    now: datetime | None = None,
) -> tuple[list[int], list[Job]]:
    """Complete `leases` (jobs of the runs `run_ids`) and claim more jobs in one round trip and
    one transaction; returns (ids completed, lost leases left out; jobs claimed). A batch
    worker's loop is this call. The transaction waits for the WAL flush unless `flush` is
    false (`completion_flushes`).

    The runs are settled by the claim, in its one pass over runs (migrations/functions/queue.sql,
    "Lock order"): settled by the completion they would be locked before the claim waits for a job
    row, which can deadlock with a worker completing that job."""
    if not leases:
        [claimed] = await db.pipeline(("job_claim", claim.params(now), model_row(Job)))
        return [], claimed
    completion = {**_leases(leases, now), "settle": False, "flush": flush}
    completing = ("job_complete_many", completion, scalar_row)
    params = {**claim.params(now), "settle_run_ids": sorted(set(run_ids))}
    claiming = ("job_claim_after_completion", params, model_row(Job))
    completed, claimed = await db.pipeline(completing, claiming)
    return sorted(completed), claimed


async def job_complete_many(
    db: Database, leases: Sequence[Lease], *, flush: bool = True, now: datetime | None = None
) -> list[int]:
    """Complete many jobs in one statement; the ids completed (lost leases are left out). The
    transaction waits for the WAL flush unless `flush` is false (`completion_flushes`)."""
    params = {**_leases(leases, now), "settle": True, "flush": flush}
    return sorted(await db.all("job_complete_many", params, row=scalar_row))


async def job_heartbeat(
    db: Database, job_id: int, lease_token: uuid.UUID, *, now: datetime | None = None
) -> Job | None:
    """Extend the lease; None when the lease was lost."""
    return await db.one("job_heartbeat", _lease(job_id, lease_token, now), row=model_row(Job))


async def job_checkpoint(
    db: Database,
    job_id: int,
    lease_token: uuid.UUID,
    cursor: str | None,
    processed: int,
    *,
    total: int | None = None,
    now: datetime | None = None,
) -> Job | None:
    """Save the resume point and progress, extending the lease; None when it was lost."""
    params = {**_lease(job_id, lease_token, now), "cursor": cursor, "processed": processed}
    return await db.one("job_checkpoint", {**params, "total": total}, row=model_row(Job))


async def job_complete(
    db: Database,
    job_id: int,
    lease_token: uuid.UUID,
    *,
    processed: int | None = None,
    flush: bool = True,
    now: datetime | None = None,
) -> Job | None:
    """Mark the job completed (and settle its run if it was the last); None: lease lost. The
    transaction waits for the WAL flush unless `flush` is false (`completion_flushes`)."""
    params = {**_lease(job_id, lease_token, now), "processed": processed, "flush": flush}
    return await db.one("job_complete", params, row=model_row(Job))


async def job_fail(
    db: Database,
    job_id: int,
    lease_token: uuid.UUID,
    error: str,
    *,
    retryable: bool,
    backoff_base: timedelta,
    backoff_max: timedelta,
    jitter_ratio: float,
    now: datetime | None = None,
    error_public: str | None = None,
) -> Job | None:
    """Retry later with backoff (retryable, attempts left) or fail for good; None when the
    lease was lost. `error` is kept for the operators, `error_public` is what the portal's
    users are told (None: that it failed)."""
    params = {**_lease(job_id, lease_token, now), "error": error, "retryable": retryable}
    params["error_public"] = error_public
    backoff = {"backoff_base": backoff_base, "backoff_max": backoff_max}
    return await db.one(
        "job_fail", {**params, **backoff, "jitter_ratio": jitter_ratio}, row=model_row(Job)
    )


async def job_park(
    db: Database,
    job_id: int,
    lease_token: uuid.UUID,
    until: datetime | timedelta,
    reason: str,
    *,
    now: datetime | None = None,
) -> Job | None:
    """Back to pending until `until` (a time, or a wait from the database's now), attempt not
    spent, cursor kept; None: lease lost."""
    params = {**_lease(job_id, lease_token, now), "reason": reason}
    if isinstance(until, timedelta):
        return await db.one("job_park_for", {**params, "wait": until}, row=model_row(Job))
    return await db.one("job_park", {**params, "until": until}, row=model_row(Job))


async def job_release(
    db: Database, job_id: int, lease_token: uuid.UUID, *, now: datetime | None = None
) -> Job | None:
    """Back to pending now, attempt not spent, cursor kept; None: lease lost."""
    return await db.one("job_release", _lease(job_id, lease_token, now), row=model_row(Job))


async def job_leases(db: Database) -> dict[JobKind, timedelta]:
    """How long a claimed job's lease lasts, per kind (the database's `job_leases`)."""
    rows = await db.all("job_leases", row=model_row(KindLease))
    return {row.kind: row.lease for row in rows}


@dataclass(frozen=True, slots=True)
class KindLease:
    kind: JobKind
    lease: timedelta


@dataclass(frozen=True, slots=True)
class PortalCredentials:
    """What the holder of a live lease gets of the job's portal."""

    portal_id: int
    token_encrypted: bytes | None  # None: the portal has no token stored
    time_zone: str  # where the portal's DAILY limit resets (an IANA name)
    token_rejected_at: datetime | None  # HubSpot refused the token: reconnect before asking


async def job_portal_token(
    db: Database, job_id: int, lease_token: uuid.UUID
) -> PortalCredentials | None:
    """The job's portal's encrypted token and time zone, for the holder of the job's live
    lease; None when the job does not run under `lease_token`."""
    params = {"job_id": job_id, "lease_token": lease_token}
    return await db.one("job_portal_token", params, row=model_row(PortalCredentials))
